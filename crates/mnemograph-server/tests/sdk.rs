//! The official Python client (`langgraph-sdk`) drives the server through its documented flows
//! (`tests/python/sdk_flows.py`) and the rest of its surface (`tests/python/surface_flows.py`),
//! and the same scripts drive Python's own server (`langgraph dev`) serving the twin graphs, so
//! both servers answer one client the same way.
//!
//! Needs `LANGGRAPH_PYTHON`, a Python with `langgraph-sdk` and `langgraph-cli[inmem]`
//! (`scripts/python-peer.sh` makes one). Without it the tests print why and pass, unless `CI` is
//! set.

mod support;

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// Kills `langgraph dev` and removes its working directory when the test ends, passed or not.
struct Killed(Child, PathBuf);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_dir_all(&self.1);
    }
}

#[test]
fn the_same_flows_pass_against_pythons_own_server() {
    let Some(python) = support::python::python() else { return };
    let cli = Path::new(&python).with_file_name("langgraph");
    assert!(
        cli.exists(),
        "{} is missing: install langgraph-cli[inmem] (scripts/python-peer.sh)",
        cli.display()
    );
    let port = StdListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // `langgraph dev` keeps its threads in its working directory: a fresh one per run.
    let work = std::env::temp_dir().join(format!("langgraph-dev-{port}"));
    std::fs::create_dir_all(&work).unwrap();
    for file in ["graphs.py", "langgraph.json"] {
        std::fs::copy(support::python::dir().join(file), work.join(file)).unwrap();
    }
    let log = work.join("server.log");
    let child = Command::new(&cli)
        .args(["dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", &port.to_string()])
        .current_dir(&work)
        .env("LANGSMITH_TRACING", "false")
        .env("LANGGRAPH_CLI_NO_ANALYTICS", "1")
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("langgraph dev starts");
    let _server = Killed(child, work.clone());
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(90);
    while !ok(port) {
        assert!(
            Instant::now() < deadline,
            "langgraph dev did not answer /ok within 90 s; log: {}",
            log.display()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    support::python::run_flows(&python, &url);
    support::python::run_script(&python, "surface_flows.py", &url);
}

/// Whether a server on `port` answers `GET /ok`.
fn ok(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /ok HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut reply = String::new();
    let _ = s.read_to_string(&mut reply);
    reply.starts_with("HTTP/1.1 200")
}
