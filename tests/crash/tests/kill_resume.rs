//! SIGKILL a worker at random points of a run with parallel tasks, resume it in a new process, and
//! check that no committed write is lost, no finished task runs twice and every history is a
//! valid chain (see `crash::checks` for the exact properties). One test per saver, against the
//! real server; without one it prints `SKIPPED` and passes, unless `CI` is set.
//!
//! Size and seed with `CRASH_KILLS` (default 200 per saver), `CRASH_SEED`,
//! `CRASH_NODE_DELAY_US`; the summary printed at the end gives the seed to rerun with.

use crash::backend::Backend;
use crash::driver;
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

async fn crash_run(backend: Backend) {
    let plan = Plan::from_env().expect("CRASH_* variables");
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_crash-worker"));
    let summary = match driver::run(exe, backend, &plan).await {
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mysql_loses_and_repeats_nothing_across_sigkills() {
    crash_run(Backend::mysql_from_env()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_loses_and_repeats_nothing_across_sigkills() {
    crash_run(Backend::redis_from_env()).await;
}
