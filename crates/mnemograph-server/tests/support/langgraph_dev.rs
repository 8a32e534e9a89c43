//! Python's own server, `langgraph dev`, serving the twin graphs of `tests/python/graphs.py`, for
//! the flows that run against both servers.

use std::net::TcpListener as StdListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `langgraph dev`; killed, and its working directory removed, when dropped, whether
/// the test passed or not.
pub(crate) struct LanggraphDev {
    child: Child,
    work: PathBuf,
    /// Its base URL.
    pub(crate) url: String,
}

impl Drop for LanggraphDev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

impl LanggraphDev {
    /// Starts `langgraph dev` next to `python` (the venv's `langgraph`), with `env` added to its
    /// environment, and waits until it answers `/ok`.
    pub(crate) fn start(python: &str, env: &[(&str, &str)]) -> Self {
        let cli = Path::new(python).with_file_name("langgraph");
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
            std::fs::copy(super::python::dir().join(file), work.join(file)).unwrap();
        }
        let log = work.join("server.log");
        let child = Command::new(&cli)
            .args(["dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", &port.to_string()])
            .current_dir(&work)
            .env("LANGSMITH_TRACING", "false")
            .env("LANGGRAPH_CLI_NO_ANALYTICS", "1")
            .envs(env.iter().copied())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("langgraph dev starts");
        let server = Self { child, work, url: format!("http://127.0.0.1:{port}") };
        let deadline = Instant::now() + Duration::from_secs(90);
        while !ok(port) {
            assert!(
                Instant::now() < deadline,
                "langgraph dev did not answer /ok within 90 s; log: {}",
                log.display()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        server
    }
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
