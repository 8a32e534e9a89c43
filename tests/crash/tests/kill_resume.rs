//! SIGKILL a worker at random points of a run with parallel tasks, resume it in a new process, and
//! check that the thread keeps the promises of its durability mode (see `crash::mode` for each
//! promise and the exact checks). One test per saver and mode, against the real server; without
//! one it prints `SKIPPED` and passes, unless `CI` is set. A test fails on a violation, and when a
//! coverage bucket its mode requires got no kill.
//!
//! Size and seed with `CRASH_KILLS` (per saver and mode), `CRASH_MAX_KILLS`, `CRASH_SEED` and
//! `CRASH_NODE_DELAY_US`; the summary printed at the end gives the seed to rerun with.

use crash::backend::Backend;
use crash::driver;
use crash::mode::Mode;
use crash::plan::Plan;
use crash::Error;

fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The chain of causes below `e`, joined.
fn causes(e: &dyn std::error::Error) -> String {
    let mut out = Vec::new();
    let mut next = e.source();
    while let Some(cause) = next {
        out.push(cause.to_string());
        next = cause.source();
    }
    out.join(": ")
}

async fn crash_run(backend: Backend, mode: Mode) {
    let plan = Plan::from_env().expect("CRASH_* variables");
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_crash-worker"));
    let file = match &backend {
        Backend::Sqlite { path } => Some(path.clone()),
        _ => None,
    };
    let summary = match driver::run(exe, backend, mode, &plan).await {
        Ok(summary) => summary,
        Err(e @ Error::Unreachable { .. }) => {
            let why = causes(&e);
            assert!(!ci(), "a server is required when CI is set: {e} ({why})");
            eprintln!("SKIPPED: {e} ({why})");
            return;
        }
        Err(e) => panic!("harness failed (seed {}): {e}: {}", plan.seed, causes(&e)),
    };
    println!("{summary}");
    assert!(summary.violations.is_empty(), "{summary}");
    assert!(summary.coverage.kills >= plan.kills, "only {} kills: {summary}", summary.coverage.kills);
    let missing: Vec<&str> = summary.missing().iter().map(|b| b.name()).collect();
    assert!(missing.is_empty(), "{mode}: no kill landed in bucket(s) {}: {summary}", missing.join(", "));
    // A passing run's SQLite file goes, as its journals do.
    for path in file.iter().flat_map(|p| ["", "-wal", "-shm"].map(|suffix| format!("{p}{suffix}"))) {
        let _ = std::fs::remove_file(path);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mysql_sync_keeps_its_promises_across_sigkills() {
    crash_run(Backend::mysql_from_env(), Mode::Sync).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mysql_async_keeps_its_promises_across_sigkills() {
    crash_run(Backend::mysql_from_env(), Mode::Async).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mysql_exit_keeps_its_promises_across_sigkills() {
    crash_run(Backend::mysql_from_env(), Mode::Exit).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_sync_keeps_its_promises_across_sigkills() {
    crash_run(Backend::redis_from_env(), Mode::Sync).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_async_keeps_its_promises_across_sigkills() {
    crash_run(Backend::redis_from_env(), Mode::Async).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_exit_keeps_its_promises_across_sigkills() {
    crash_run(Backend::redis_from_env(), Mode::Exit).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_sync_keeps_its_promises_across_sigkills() {
    crash_run(Backend::sqlite_in_temp_dir(), Mode::Sync).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_async_keeps_its_promises_across_sigkills() {
    crash_run(Backend::sqlite_in_temp_dir(), Mode::Async).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_exit_keeps_its_promises_across_sigkills() {
    crash_run(Backend::sqlite_in_temp_dir(), Mode::Exit).await;
}
