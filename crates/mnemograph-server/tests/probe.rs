//! Every method of the official SDK clients, once: the probes (`tests/python/probe.py` for
//! `langgraph-sdk`, `tests/js/probe.mjs` for `@langchain/langgraph-sdk`) call each method of
//! their client against the server in one process, against a cluster of two processes (feature
//! `cluster`), and against Python's own server (`langgraph dev`) serving the twin graphs. Every
//! method must succeed on the server, and where an answer's shape differs from `langgraph dev`'s
//! the difference must be in the reviewed list next to the probe (`probe_differences.json`), each
//! with its reason; a difference the list lacks fails the test, and so does a listed one no
//! longer found, so the list stays true. The crate README describes the listed differences.
//!
//! Needs `LANGGRAPH_PYTHON` (a Python with `langgraph-sdk` and `langgraph-cli[inmem]`,
//! `scripts/python-peer.sh` makes one), Node.js 20 and npm for the JavaScript probe, and MySQL
//! and Redis for the cluster; without one, that part prints why and passes, unless `CI` is set.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::probe::Report;

/// One probe: the program that runs it, its script, and the reviewed list of its differences.
struct Probe {
    sdk: &'static str,
    program: String,
    script: PathBuf,
    differences: PathBuf,
}

impl Probe {
    /// Runs the probe against `url`, writing its report under `reports`, and reads the report;
    /// panics with what the probe printed when it wrote none (a method without a recipe).
    fn run(&self, url: &str, server: &str, reports: &Path) -> Report {
        let path = reports.join(format!("{}-{}.json", self.sdk, server.replace(' ', "-")));
        let dir = self.script.parent().expect("the probe's folder");
        let out = Command::new(&self.program).arg(&self.script).arg(url).arg(&path).current_dir(dir).output();
        let out = out.expect("the probe starts");
        let printed =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        println!("== {} probe on {server}\n{printed}", self.sdk);
        assert!(path.exists(), "the {} probe wrote no report on {server} ({url}):\n{printed}", self.sdk);
        Report::read(&path)
    }
}

/// Runs every probe against every server at once, then checks each of our servers' reports.
async fn probe_all(probes: Vec<Probe>, ours: Vec<(&'static str, String)>, langgraph: String) {
    let reports = std::env::temp_dir().join(format!("mnemograph-probe-{}", std::process::id()));
    std::fs::create_dir_all(&reports).expect("a folder for the reports");
    let probes: Vec<std::sync::Arc<Probe>> = probes.into_iter().map(std::sync::Arc::new).collect();
    let targets: Vec<(&'static str, String)> =
        ours.iter().cloned().chain([("langgraph dev", langgraph)]).collect();
    let mut runs = Vec::new();
    for probe in &probes {
        for (server, url) in &targets {
            let (probe, server, url, reports) = (probe.clone(), *server, url.clone(), reports.clone());
            runs.push(tokio::task::spawn_blocking(move || probe.run(&url, server, &reports)));
        }
    }
    let mut results = Vec::new();
    for run in runs {
        results.push(run.await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())));
    }
    let mut results = results.into_iter();
    let mut problems = String::new();
    for probe in &probes {
        let mine: Vec<Report> = ours.iter().map(|_| results.next().expect("a report per server")).collect();
        let langgraph = results.next().expect("langgraph dev's report");
        for ((server, _), report) in ours.iter().zip(&mine) {
            let name = format!("{server} ({} probe)", probe.sdk);
            assert_eq!(report.methods(), langgraph.methods(), "both servers were called the same methods");
            println!("{} probe: {} methods called on {server}", probe.sdk, report.methods());
            let checked = support::probe::check(&probe.differences, &name, report, &langgraph);
            problems += &checked.err().unwrap_or_default();
        }
    }
    // Kept when the test fails, for a look at what each server answered.
    assert!(problems.is_empty(), "{problems}\nthe reports are in {}", reports.display());
    let _ = std::fs::remove_dir_all(&reports);
}

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
    let mut probes = vec![Probe {
        sdk: "python",
        program: python.clone(),
        script: support::python::dir().join("probe.py"),
        differences: support::python::dir().join("probe_differences.json"),
    }];
    if support::node::ready() {
        probes.push(Probe {
            sdk: "js",
            program: "node".to_owned(),
            script: support::node::dir().join("probe.mjs"),
            differences: support::node::dir().join("probe_differences.json"),
        });
    }
    let ours = vec![("one process", serve_one().await)];
    #[cfg(feature = "cluster")]
    let pair = support::pair::Pair::start("probe").await;
    #[cfg(feature = "cluster")]
    let ours: Vec<_> = ours.into_iter().chain(pair.as_ref().map(|p| ("a cluster", p.url.clone()))).collect();
    // Started once every requirement is known to be there, so a test that fails on one leaves
    // no server behind.
    let langgraph =
        tokio::task::spawn_blocking(move || support::langgraph_dev::LanggraphDev::start(&python, &[]));
    let langgraph = langgraph.await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    probe_all(probes, ours, langgraph.url.clone()).await;
    #[cfg(feature = "cluster")]
    if let Some(pair) = pair {
        pair.stop().await;
    }
}
