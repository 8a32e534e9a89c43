//! Every method of the official SDK clients, once: the probes (`tests/python/probe.py` for
//! `langgraph-sdk`, `tests/js/probe.mjs` for `@langchain/langgraph-sdk`) call each method of
//! their client against the server in one process and against Python's own server
//! (`langgraph dev`) serving the twin graphs; `mnemograph-server-cluster`'s tests probe a
//! cluster the same way. Every method must succeed on the server, and where an answer's shape differs from `langgraph dev`'s
//! the difference must be in the reviewed list next to the probe (`probe_differences.json`), each
//! with its reason; a difference the list lacks fails the test, and so does a listed one no
//! longer found, so the list stays true. The crate README describes the listed differences.
//!
//! Needs `LANGGRAPH_PYTHON` (a Python with `langgraph-sdk` and `langgraph-cli[inmem]`,
//! `scripts/python-peer.sh` makes one), and Node.js 20 and npm for the JavaScript probe; without
//! one, that part prints why and passes, unless `CI` is set.

mod support;

use support::probe::{probe_all, probes};

/// Serves the test graphs in one process; returns its URL.
async fn serve_one() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(support::graphs::server().serve(listener));
    url
}

/// Both probes share one `langgraph dev`, the slowest server to start, and run at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sdk_method_answers_on_the_server_as_on_langgraph_dev() {
    let Some(python) = support::python::python() else { return };
    let probes = probes(&python);
    let ours = vec![("one process", serve_one().await)];
    // Started once every requirement is known to be there, so a test that fails on one leaves
    // no server behind.
    let langgraph =
        tokio::task::spawn_blocking(move || support::langgraph_dev::LanggraphDev::start(&python, &[]));
    let langgraph = langgraph.await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    probe_all(probes, ours, langgraph.url.clone()).await;
}
