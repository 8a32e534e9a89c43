//! The official JavaScript client (`@langchain/langgraph-sdk`, pinned in `tests/js/package.json`
//! and its lockfile) drives the server through its core flows (`tests/js/sdk_flows.mjs`). It
//! parses responses and server-sent events with its own code, so it checks the wire format
//! beyond what the Python client tolerates. The same flows run against Python's own server
//! (`langgraph dev`), so both answer the JavaScript client alike.
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
    let server = support::graphs::server().with_cron_poll_interval(std::time::Duration::from_millis(200));
    // The flows' webhook receiver listens on loopback.
    #[cfg(feature = "webhooks")]
    let server =
        server.with_webhooks(mnemograph_server::WebhookPolicy::new().allow_host("127.0.0.1")).unwrap();
    let server = tokio::spawn(server.serve(listener));
    let flows = tokio::task::spawn_blocking(move || run_flows(&url));
    let result = flows.await;
    server.abort();
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
}

#[test]
fn the_same_js_flows_pass_against_pythons_own_server() {
    let Some(python) = support::python::python() else { return };
    if !support::node::ready() {
        return;
    }
    let server = support::langgraph_dev::LanggraphDev::start(&python, &[("CRON_SCHEDULER_SLEEP_TIME", "1")]);
    run_flows(&server.url);
}
