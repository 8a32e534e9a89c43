//! Server faults: while workers run turns on several threads, the saver's server connections are
//! killed again and again from an admin connection (`KILL CONNECTION` of the sessions on the
//! test's MariaDB database, `CLIENT KILL ID` of the saver's Redis client; the shared servers keep
//! running). Calls hit by a kill fail with the saver's typed error; then, with the same saver
//! object and no restart, every thread takes more turns successfully. Afterwards every
//! checkpoint reads back, each thread is one chain whose conversation only grew (nothing
//! half-written is visible), and every turn reported successful is in the thread, whole.
//!
//! Prints a `RESULT faults` line per saver (run with `--nocapture`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_core::checkpoint::backend::uuid6;
use mnemograph_core::checkpoint::CheckpointError;
use mnemograph_core::BoxError;
use mnemograph_core::{Error, RunConfig};
use reliability::backend::{self, Backend};
use reliability::chat;
use reliability::check::{has_turn, history, messages_only_grow};
use tokio::task::JoinSet;

/// Threads worked on at once.
const THREADS: usize = 8;
/// Times the saver's connections are killed.
const KILLS: usize = 20;
/// Pause between kills.
const KILL_EVERY: Duration = Duration::from_millis(100);
/// Turns each thread takes after the last kill; all must succeed.
const RECOVERY_TURNS: usize = 3;
/// How long after the faults recovery starts: past the MySQL saver's default `ping_after_idle`.
const RECOVERY_AFTER: Duration = Duration::from_millis(1_200);
/// Upper bound on each phase.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// The saver error a failed call carries, as a short label (`Sqlx(Io`, `redis: broken pipe`), or `None`
/// when the failure is not the saver's typed backend error.
type Classify = fn(&BoxError) -> Option<String>;

fn mysql_error(source: &BoxError) -> Option<String> {
    let e = source.downcast_ref::<mnemograph_checkpoint_mysql::Error>()?;
    Some(label(&format!("{e:?}")))
}

fn redis_error(source: &BoxError) -> Option<String> {
    // Its Display carries the driver's message (`redis: broken pipe`).
    let e = source.downcast_ref::<mnemograph_checkpoint_redis::RedisSaverError>()?;
    Some(e.to_string().chars().take(48).collect())
}

/// The first two levels of a Debug rendering: `Sqlx(Io(Custom { … }))` → `Sqlx(Io`.
fn label(debug: &str) -> String {
    debug.split('(').take(2).collect::<Vec<_>>().join("(")
}

/// The saver-error label of a failed call; panics on any other failure.
fn typed_failure(saver: &str, text: &str, e: &Error, classify: Classify) -> String {
    match e {
        Error::Checkpoint(CheckpointError::Backend(source)) => {
            classify(source).unwrap_or_else(|| panic!("{saver}: {text}: untyped backend error {source:?}"))
        }
        other => panic!("{saver}: {text}: expected the saver's connection error, got {other:?}"),
    }
}

async fn faults(mut backend: Backend, classify: Classify) {
    let graph = chat::graph(Arc::clone(&backend.saver), Duration::from_millis(2));
    let run = uuid6(0);
    let ids: Vec<String> = (0..THREADS).map(|t| format!("fault-{run}-{t}")).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let mut workers = JoinSet::new();
    for id in ids.clone() {
        let (graph, stop) = (graph.clone(), Arc::clone(&stop));
        workers.spawn(async move {
            let config = RunConfig::thread(id.clone());
            let mut calls = Vec::new();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let text = format!("{id} turn {n}");
                let result = graph.invoke(chat::say(&text), &config).await.map(drop);
                calls.push((text, result));
                n += 1;
            }
            calls
        });
    }
    let mut killed = 0;
    for _ in 0..KILLS {
        tokio::time::sleep(KILL_EVERY).await;
        killed += backend.kill_connections().await;
    }
    stop.store(true, Ordering::Relaxed);
    let (mut committed, mut failures) = (Vec::new(), BTreeMap::<String, usize>::new());
    let joined = tokio::time::timeout(TIME_LIMIT, async {
        while let Some(calls) = workers.join_next().await {
            for (text, result) in calls.expect("worker panicked") {
                match result {
                    Ok(()) => committed.push(text),
                    Err(e) => {
                        *failures.entry(typed_failure(backend.name, &text, &e, classify)).or_default() += 1
                    }
                }
            }
        }
    })
    .await;
    assert!(joined.is_ok(), "{}: workers did not stop within {TIME_LIMIT:?}", backend.name);
    assert!(killed > 0, "{}: no connection was killed", backend.name);
    assert!(!failures.is_empty(), "{}: {killed} kills, yet no call failed", backend.name);

    // Recovery: the same saver, no restart. Every thread takes more turns, all successful. A
    // pooled MySQL connection is pinged before use only once it has been idle for the saver's
    // `ping_after_idle` (a second by default): one the kills closed and handed out sooner fails
    // its statement with the driver's error, as the saver documents. Recovery starts past that
    // window, so every connection the kills left in the pool has been checked.
    tokio::time::sleep(RECOVERY_AFTER).await;
    let recovery_start = Instant::now();
    let mut recovery = JoinSet::new();
    for id in ids.clone() {
        let graph = graph.clone();
        recovery.spawn(async move {
            let config = RunConfig::thread(id.clone());
            let mut first_ok = None;
            for n in 0..RECOVERY_TURNS {
                let text = format!("{id} after {n}");
                graph.invoke(chat::say(&text), &config).await.map_err(|e| format!("{text}: {e:?}"))?;
                first_ok.get_or_insert_with(Instant::now);
            }
            Ok::<_, String>(first_ok)
        });
    }
    let mut first_recovered: Option<Instant> = None;
    let recovered = tokio::time::timeout(TIME_LIMIT, async {
        while let Some(done) = recovery.join_next().await {
            let at = done
                .expect("worker panicked")
                .unwrap_or_else(|e| panic!("{}: no recovery: {e}", backend.name));
            first_recovered = first_recovered.min(at).or(at);
        }
    })
    .await;
    assert!(recovered.is_ok(), "{}: recovery did not finish within {TIME_LIMIT:?}", backend.name);
    let recovery_time = first_recovered.map_or(Duration::ZERO, |t| t.duration_since(recovery_start));

    let mut checkpoints = 0;
    for id in &ids {
        let history = history(&*backend.saver, id).await;
        messages_only_grow(id, &history);
        checkpoints += history.len();
        let state = graph.get_state(&RunConfig::thread(id.clone())).await.expect("final state");
        let texts = chat::texts(&state.values);
        for text in committed.iter().filter(|t| t.starts_with(id.as_str())) {
            assert!(has_turn(&texts, text), "{}: committed turn `{text}` is not whole", backend.name);
        }
        let tail: Vec<String> =
            (0..RECOVERY_TURNS).flat_map(|n| chat::turn(&format!("{id} after {n}"))).collect();
        assert!(texts.ends_with(&tail), "{}: thread {id} does not end with its recovery turns", backend.name);
    }
    let failed: usize = failures.values().sum();
    println!(
        "RESULT faults saver={} kills={KILLS} connections_killed={killed} ok_turns={} failed_turns={failed} \
         errors={failures:?} first_recovery_turn={:.1}ms checkpoints={checkpoints}",
        backend.name,
        committed.len(),
        recovery_time.as_secs_f64() * 1e3
    );
    backend.cleanup(&ids).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn mysql_connections_killed_mid_run_fail_typed_then_recover() {
    if let Some(backend) = backend::mysql("faults", 4).await {
        faults(backend, mysql_error).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn redis_client_killed_mid_run_fails_typed_then_recovers() {
    if let Some(backend) = backend::redis("faults").await {
        faults(backend, redis_error).await;
    }
}
