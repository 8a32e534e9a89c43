//! Load: many threads at once on each saver, each running its turns one after another through
//! the two-node chat graph. Every turn must succeed, and every thread must end with exactly the
//! messages of its turns; throughput and per-turn latency are printed as a `RESULT load` line
//! (run with `--nocapture` to see it).
//!
//! The size is `RELIABILITY_THREADS` × `RELIABILITY_TURNS`: 100 × 20 by default, short enough for
//! a plain `cargo test`; `.ci/run` runs the full 100 × 50 (`RELIABILITY_TURNS=50`), whose times
//! per saver are in docs/reliability.md.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_core::checkpoint::backend::uuid6;
use mnemograph_core::RunConfig;
use reliability::backend::{self, Backend};
use reliability::chat;
use reliability::check::single_chain;
use reliability::stats::{Latencies, LoadReport};
use tokio::task::JoinSet;

/// Upper bound on one saver's whole load run, so a hung server fails the test instead of the CI
/// job's timeout.
const TIME_LIMIT: Duration = Duration::from_secs(300);

/// Threads whose whole history is read back and checked for being one chain (reading every
/// checkpoint of every thread would cost more than the load itself).
const CHAINS_CHECKED: usize = 5;

/// A size from the environment, or `default`.
fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Runs the load on `backend`, checks every thread, prints the figures.
async fn load(backend: Backend) {
    let threads = setting("RELIABILITY_THREADS", 100);
    let turns = setting("RELIABILITY_TURNS", 20);
    let graph = chat::graph(Arc::clone(&backend.saver), Duration::ZERO);
    let run = uuid6(0);
    let ids: Vec<String> = (0..threads).map(|t| format!("load-{run}-{t}")).collect();
    let started = Instant::now();
    let mut workers = JoinSet::new();
    for id in ids.clone() {
        let graph = graph.clone();
        workers.spawn(async move {
            let config = RunConfig::thread(id.clone());
            let mut latencies = Latencies::new();
            for n in 0..turns {
                let begun = Instant::now();
                let input = chat::say(&format!("{id} turn {n}"));
                graph.invoke(input, &config).await.map_err(|e| format!("{id} turn {n}: {e:?}"))?;
                latencies.push(begun.elapsed());
            }
            Ok::<_, String>(latencies)
        });
    }
    let mut latencies = Latencies::new();
    let mut errors = Vec::new();
    let finished = tokio::time::timeout(TIME_LIMIT, async {
        while let Some(joined) = workers.join_next().await {
            match joined.expect("worker panicked") {
                Ok(l) => latencies.extend(l),
                Err(e) => errors.push(e),
            }
        }
    })
    .await;
    assert!(finished.is_ok(), "{}: load did not finish within {TIME_LIMIT:?}", backend.name);
    let wall = started.elapsed();
    assert!(errors.is_empty(), "{}: {} failed turns, first: {}", backend.name, errors.len(), errors[0]);

    for id in &ids {
        let state = graph.get_state(&RunConfig::thread(id.clone())).await.expect("final state");
        let expected: Vec<String> = (0..turns).flat_map(|n| chat::turn(&format!("{id} turn {n}"))).collect();
        assert_eq!(chat::texts(&state.values), expected, "{}: thread {id}", backend.name);
    }
    for id in ids.iter().take(CHAINS_CHECKED) {
        // Input, START, plan and answer: four checkpoints per turn.
        assert_eq!(single_chain(&*backend.saver, id).await, 4 * turns, "{}: thread {id}", backend.name);
    }
    println!("{}", LoadReport { saver: backend.name, threads, turns, wall, latencies });
    backend.cleanup(&ids).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn load_in_memory_loses_no_turn() {
    load(backend::memory()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn load_on_mysql_loses_no_turn() {
    if let Some(backend) = backend::mysql("load", 16).await {
        load(backend).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn load_on_redis_loses_no_turn() {
    if let Some(backend) = backend::redis("load").await {
        load(backend).await;
    }
}
