//! The Python SDK client the flows tests run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python with `langgraph-sdk`, from `LANGGRAPH_PYTHON`; `None` (after saying why) when it
/// is not set and `CI` is not set.
pub(crate) fn python() -> Option<String> {
    match std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty()) {
        Some(python) => Some(python),
        None => {
            let why = "LANGGRAPH_PYTHON is not set (scripts/python-peer.sh makes one)";
            assert!(
                std::env::var_os("CI").is_none_or(|v| v.is_empty()),
                "the Python SDK is required when CI is set: {why}"
            );
            eprintln!("SKIPPED: langgraph-sdk unavailable ({why})");
            None
        }
    }
}

/// The server's `tests/python`, named from the crate's folder so that the cluster crate's tests,
/// which include this file, run the same scripts.
pub(crate) fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../mnemograph-server/tests/python")
}

/// Runs the flows against `url`; panics with the script's report when one fails.
pub(crate) fn run_flows(python: &str, url: &str) {
    run_script(python, "sdk_flows.py", url);
}

/// Runs the flows of `script` (in `tests/python`) against `url`; panics with the script's report
/// when one fails.
pub(crate) fn run_script(python: &str, script: &str, url: &str) {
    let out =
        Command::new(python).arg(dir().join(script)).arg(url).output().expect("the Python SDK script starts");
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    println!("{report}");
    assert!(out.status.success(), "SDK flows failed against {url}:\n{report}");
    assert!(report.contains("all flows passed"), "{report}");
}
