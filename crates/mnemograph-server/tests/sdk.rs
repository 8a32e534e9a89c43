//! The official Python client (`langgraph-sdk`) drives the server through its documented flows
//! (`tests/python/sdk_flows.py`) and the rest of its surface (`tests/python/surface_flows.py`),
//! and the same scripts drive Python's own server (`langgraph dev`) serving the twin graphs, so
//! both servers answer one client the same way.
//!
//! Needs `LANGGRAPH_PYTHON`, a Python with `langgraph-sdk` and `langgraph-cli[inmem]`
//! (`scripts/python-peer.sh` makes one). Without it the tests print why and pass, unless `CI` is
//! set.

mod support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_flows_pass_against_the_server() {
    let Some(python) = support::python::python() else { return };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = support::graphs::server();
    // The flows' webhook receiver listens on loopback, at a port of its choosing.
    #[cfg(feature = "webhooks")]
    let server =
        server.with_webhooks(mnemograph_server::WebhookPolicy::new().allow_host("127.0.0.1")).unwrap();
    let server = tokio::spawn(server.serve(listener));
    let flows = tokio::task::spawn_blocking(move || support::python::run_flows(&python, &url));
    let result = flows.await;
    server.abort();
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_of_the_sdk_surface_passes_against_the_server() {
    let Some(python) = support::python::python() else { return };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(support::graphs::server().serve(listener));
    let flows =
        tokio::task::spawn_blocking(move || support::python::run_script(&python, "surface_flows.py", &url));
    let result = flows.await;
    server.abort();
    if let Err(e) = result {
        std::panic::resume_unwind(e.into_panic());
    }
}

#[test]
fn the_same_flows_pass_against_pythons_own_server() {
    let Some(python) = support::python::python() else { return };
    let server = support::langgraph_dev::LanggraphDev::start(&python, &[]);
    support::python::run_flows(&python, &server.url);
    support::python::run_script(&python, "surface_flows.py", &server.url);
}
