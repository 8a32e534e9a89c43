//! Two workers, one thread, at once: round after round, two tasks released together invoke the
//! same thread. Every call either commits or fails with the typed conflict; at least one call of
//! each round commits; afterwards the history is one chain whose conversation only grew, and
//! every turn a successful call reported is in the final state, whole. With
//! `invoke_retrying_conflicts` and `Durability::Exit` every call commits.
//!
//! Prints a `RESULT race` line per saver (run with `--nocapture`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_core::checkpoint::backend::uuid6;
use mnemograph_core::messages::MessagesState;
use mnemograph_core::{CompiledGraph, Durability, Error, RunConfig};
use reliability::backend::{self, Backend};
use reliability::chat;
use reliability::check::{has_turn, history, messages_only_grow};
use tokio::sync::Barrier;

/// Rounds per saver of plain calls.
const ROUNDS: usize = 150;
/// Rounds per saver of retrying calls (each of which runs the graph about three times).
const RETRY_ROUNDS: usize = 50;

/// Upper bound on one saver's rounds.
const TIME_LIMIT: Duration = Duration::from_secs(120);

/// How the two calls of a round are made.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    /// `invoke`, default durability: a loser fails with the conflict.
    Plain,
    /// `invoke_retrying_conflicts` under `Durability::Exit`: a loser runs again after the winner.
    Retrying,
}

/// One call of a round, started when both workers are ready.
fn call(
    graph: &CompiledGraph<MessagesState>,
    config: &RunConfig,
    start: &Arc<Barrier>,
    text: String,
    mode: Mode,
) -> tokio::task::JoinHandle<(String, Result<(), Error>)> {
    let (graph, config, start) = (graph.clone(), config.clone(), Arc::clone(start));
    tokio::spawn(async move {
        start.wait().await;
        let input = chat::say(&text);
        let result = match mode {
            Mode::Plain => graph.invoke(input, &config).await,
            Mode::Retrying => graph.invoke_retrying_conflicts(input, &config, 20).await,
        };
        (text, result.map(drop))
    })
}

/// Runs the rounds on `backend` and checks the thread.
async fn race(backend: Backend, mode: Mode) {
    // A short wait in each node, as a model call would take, keeps both runs in flight together.
    let graph = chat::graph(Arc::clone(&backend.saver), Duration::from_millis(1));
    let thread = format!("race-{}", uuid6(0));
    let mut config = RunConfig::thread(thread.clone());
    if mode == Mode::Retrying {
        config = config.durability(Durability::Exit);
    }
    let rounds_count = if mode == Mode::Plain { ROUNDS } else { RETRY_ROUNDS };
    let (mut committed, mut conflicts, mut both) = (Vec::new(), 0, 0);
    let started = Instant::now();
    let rounds = async {
        for round in 0..rounds_count {
            let start = Arc::new(Barrier::new(2));
            let a = call(&graph, &config, &start, format!("round {round} a"), mode);
            let b = call(&graph, &config, &start, format!("round {round} b"), mode);
            let mut ok = 0;
            for handle in [a, b] {
                let (text, result) = handle.await.expect("worker panicked");
                match result {
                    Ok(()) => {
                        ok += 1;
                        committed.push(text);
                    }
                    Err(e) if e.is_conflict() && mode == Mode::Plain => conflicts += 1,
                    Err(e) => panic!("{}: round {round}: {text}: {e:?}", backend.name),
                }
            }
            assert!(ok >= 1, "{}: round {round}: both calls failed", backend.name);
            both += usize::from(ok == 2);
        }
    };
    assert!(tokio::time::timeout(TIME_LIMIT, rounds).await.is_ok(), "{}: rounds took too long", backend.name);
    let elapsed = started.elapsed();

    let history = history(&*backend.saver, &thread).await;
    messages_only_grow(&thread, &history);
    let state = graph.get_state(&config).await.expect("final state");
    let texts = chat::texts(&state.values);
    for text in &committed {
        assert!(
            has_turn(&texts, text),
            "{}: committed turn `{text}` is not whole in the thread",
            backend.name
        );
    }
    if mode == Mode::Retrying {
        assert_eq!(committed.len(), 2 * rounds_count);
        assert_eq!(texts.len(), 3 * 2 * rounds_count, "{}: a retried turn was applied twice", backend.name);
    }
    println!(
        "RESULT race saver={} mode={mode:?} rounds={rounds_count} committed_calls={} conflicts={conflicts} \
         rounds_both_committed={both} checkpoints={} elapsed={:.2}s",
        backend.name,
        committed.len(),
        history.len(),
        elapsed.as_secs_f64()
    );
    backend.cleanup(&[thread]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_workers_in_memory_commit_or_conflict() {
    race(backend::memory(), Mode::Plain).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_workers_on_mysql_commit_or_conflict() {
    if let Some(backend) = backend::mysql("race", 4).await {
        race(backend, Mode::Plain).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_workers_on_redis_commit_or_conflict() {
    if let Some(backend) = backend::redis("race").await {
        race(backend, Mode::Plain).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_retrying_workers_in_memory_both_commit() {
    race(backend::memory(), Mode::Retrying).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_retrying_workers_on_mysql_both_commit() {
    if let Some(backend) = backend::mysql("race_retry", 4).await {
        race(backend, Mode::Retrying).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_retrying_workers_on_redis_both_commit() {
    if let Some(backend) = backend::redis("race-retry").await {
        race(backend, Mode::Retrying).await;
    }
}
