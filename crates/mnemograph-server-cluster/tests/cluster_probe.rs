//! Every method of the official SDK clients, once, on a cluster of two processes: the server's
//! probes (its `tests/probe.rs`) against the cluster and against Python's own server
//! (`langgraph dev`), the differences checked against the same reviewed lists.
//!
//! Needs `LANGGRAPH_PYTHON`, MySQL and Redis, and Node.js 20 and npm for the JavaScript probe;
//! without one, that part prints why and passes, unless `CI` is set.

mod support;

use support::probe::{probe_all, probes};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sdk_method_answers_on_a_cluster_as_on_langgraph_dev() {
    let Some(python) = support::python::python() else { return };
    let probes = probes(&python);
    let Some(pair) = support::pair::Pair::start("probe").await else { return };
    let ours = vec![("a cluster", pair.url.clone())];
    // Started once every requirement is known to be there, so a test that fails on one leaves
    // no server behind.
    let langgraph =
        tokio::task::spawn_blocking(move || support::langgraph_dev::LanggraphDev::start(&python, &[]));
    let langgraph = langgraph.await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    probe_all(probes, ours, langgraph.url.clone()).await;
    pair.stop().await;
}
