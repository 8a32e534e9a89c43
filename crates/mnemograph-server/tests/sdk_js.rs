//! The official JavaScript client (`@langchain/langgraph-sdk`, pinned in `tests/js/package.json`
//! and its lockfile) drives the server through its core flows (`tests/js/sdk_flows.mjs`). It
//! parses responses and server-sent events with its own code, so it checks the wire format
//! beyond what the Python client tolerates.
//!
//! Needs Node.js 20 or newer and npm. The test installs the pinned packages into
//! `tests/js/node_modules` with `npm ci` when they are missing or another version, and reuses
//! them afterwards without the network. Without node or npm, or when the install fails, the test
//! prints why and passes, unless `CI` is set.

mod support;

use std::process::Command;

/// Runs the flows against `url`; panics with the script's report when one fails.
fn run_flows(url: &str) {
    let dir = support::node::dir();
    let out = Command::new("node").arg(dir.join("sdk_flows.mjs")).arg(url).current_dir(&dir).output();
    let out = out.expect("node starts");
    let report = support::node::report(&out);
    println!("{report}");
    assert!(out.status.success(), "JS SDK flows failed against {url}:\n{report}");
    assert!(report.contains("all flows passed"), "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_flows_pass_against_the_server() {
    if !support::node::ready() {
        return;
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(support::graphs::server().serve(listener));
    let flows = tokio::task::spawn_blocking(move || run_flows(&url));
    let result = flows.await;
    server.abort();
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
}
