//! The Python package, installed as a wheel, run by Python LangGraph: LangGraph's own checkpointer
//! conformance suite on every saver (`python/conformance.py`), graphs on every saver against
//! LangGraph's `InMemorySaver` (`python/graphs.py`), and the boundary itself — rows identical to
//! `PyMySQLSaver`'s, exact round trips, typed errors, panics (`python/boundary.py`).
//!
//! Needs `LANGGRAPH_PYTHON` with the wheel installed (`scripts/test.sh` runs
//! `scripts/python-bindings.sh`, which builds and installs it), MariaDB/MySQL at `MYSQL_URL` and
//! Redis at `REDIS_URL`. Without them the tests print why and pass, unless `CI` is set.

use std::process::Command;

/// Where LangGraph's conformance report is left for `scripts/test.sh` to print.
const REPORT: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/python-conformance.txt");

fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Says why a test cannot run: a failure under CI, a printed skip otherwise.
fn skip(why: &str) {
    assert!(!ci(), "required when CI is set: {why}");
    eprintln!("SKIPPED: {why}");
}

/// The interpreter with the bindings installed, the MySQL server URL (no database) and the Redis
/// URL; `None` after saying why when one is missing.
fn peer() -> Option<(String, String, String)> {
    let Some(python) = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty()) else {
        skip("LANGGRAPH_PYTHON is not set (scripts/python-peer.sh makes one)");
        return None;
    };
    let found = Command::new(&python).args(["-c", "import mnemograph_checkpoint"]).output();
    if !found.is_ok_and(|o| o.status.success()) {
        skip("mnemograph_checkpoint is not installed (bash scripts/python-bindings.sh installs it)");
        return None;
    }
    let Ok(mysql) = std::env::var("MYSQL_URL") else {
        skip("MYSQL_URL is not set");
        return None;
    };
    // The scripts create their own databases on the server.
    let server = match mysql.rsplit_once('/') {
        Some((server, _db)) if server.contains("://") && !server.ends_with('/') => server.to_owned(),
        _ => mysql.trim_end_matches('/').to_owned(),
    };
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned());
    Some((python, server, redis))
}

/// Runs a script of `tests/python` and returns its output; fails with it unless it exits 0.
fn run(python: &str, script: &str, args: &[&str]) -> String {
    let path = format!("{}/tests/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python).arg(&path).args(args).output().expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{script} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn langgraph_conformance_suite_passes_every_capability_on_every_saver() {
    let Some((python, server, redis)) = peer() else { return };
    let out = run(&python, "conformance.py", &["--mysql", &server, "--redis", &redis]);
    println!("{out}");
    // `scripts/test.sh` prints the report after the tests, which capture this test's output.
    std::fs::write(REPORT, &out).expect("write the conformance report");
    for saver in ["InMemorySaver", "MySQLSaver", "RedisSaver", "SQLiteSaver"] {
        let report = out.split(&format!("Checkpointer Validation: mnemograph {saver}")).nth(1);
        let report = report.unwrap_or_else(|| panic!("no report for {saver}:\n{out}"));
        let result = report.lines().find(|l| l.contains("Result:")).unwrap_or_default();
        assert!(result.contains("FULL (8/8)"), "{saver}: {result}\n{out}");
    }
}

/// The Postgres saver on its own, so that the other savers' suite needs no Postgres server:
/// `DATABASE_URL` names the server (the script makes its own database there).
#[test]
fn langgraph_conformance_suite_passes_every_capability_on_the_postgres_saver() {
    let Some((python, _, _)) = peer() else { return };
    let Ok(url) = std::env::var("DATABASE_URL") else {
        skip("DATABASE_URL is not set");
        return;
    };
    let server = match url.rsplit_once('/') {
        Some((server, _db)) if server.contains("://") && !server.ends_with('/') => server.to_owned(),
        _ => url.trim_end_matches('/').to_owned(),
    };
    let out = run(&python, "conformance.py", &["--only", "postgres", "--postgres", &server]);
    println!("{out}");
    let report = out.split("Checkpointer Validation: mnemograph PostgresSaver").nth(1);
    let report = report.unwrap_or_else(|| panic!("no report for PostgresSaver:\n{out}"));
    let result = report.lines().find(|l| l.contains("Result:")).unwrap_or_default();
    assert!(result.contains("FULL (8/8)"), "PostgresSaver: {result}\n{out}");
}

#[test]
fn python_graphs_run_on_every_saver_as_on_langgraphs_in_memory_saver() {
    let Some((python, server, redis)) = peer() else { return };
    let out = run(&python, "graphs.py", &[&server, &redis]);
    println!("{out}");
    assert_eq!(out.lines().filter(|l| l.starts_with("ok ")).count(), 8, "4 savers x invoke/ainvoke:\n{out}");
}

#[test]
fn the_boundary_keeps_bytes_types_errors_and_survives_panics() {
    let Some((python, server, redis)) = peer() else { return };
    let out = run(&python, "boundary.py", &[&server, &redis]);
    println!("{out}");
    assert!(out.contains("same rows as PyMySQLSaver"), "{out}");
    assert!(out.contains("a Rust panic raises RuntimeError"), "{out}");
}

/// Leaving Python while awaitables are still running ends the process cleanly: their results,
/// arriving while the interpreter shuts down, are dropped instead of attaching to it (which
/// aborts or crashes the process). The race is timing-dependent, so the script runs 10 times.
#[test]
fn exiting_with_operations_under_way_ends_the_process_cleanly() {
    let Some((python, server, _)) = peer() else { return };
    let path = format!("{}/tests/python/exit.py", env!("CARGO_MANIFEST_DIR"));
    for round in 1..=10 {
        let out = Command::new(&python).arg(&path).arg(&server).output().expect("run python");
        assert!(
            out.status.success()
                && String::from_utf8_lossy(&out.stdout).contains("left with operations under way"),
            "round {round}: {:?}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
