//! What the parent check costs: the same chain of checkpoints saved with plain `put` and with
//! commits expecting the latest parent, one after another on one thread, on each saver. Both chains must come
//! back whole; the per-put latencies are printed as `RESULT overhead` lines (run with
//! `--nocapture`).

use std::time::{Duration, Instant};

use mnemograph_core::checkpoint::backend::{checkpoint_id, next_version};
use mnemograph_core::checkpoint::{
    ChainLink, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Commit, ExpectParent,
    CHECKPOINT_VERSION,
};
use mnemograph_core::value::ChannelValue;
use reliability::backend::{self, Backend};
use reliability::check::single_chain;
use reliability::stats::Latencies;

/// Checkpoints per chain.
const PUTS: usize = 300;

/// Saves a chain of [`PUTS`] checkpoints on `thread` (checked puts when `checked`), each with a
/// new value of one list channel; returns the latency of each put.
async fn chain(backend: &Backend, thread: &str, checked: bool) -> Latencies {
    let mut latencies = Latencies::new();
    let mut parent = CheckpointConfig::thread(thread);
    let mut version = None;
    for step in 0..PUTS {
        let v = next_version(version.as_deref());
        let mut checkpoint =
            Checkpoint { v: CHECKPOINT_VERSION, id: checkpoint_id(step as i64), ..Checkpoint::default() };
        checkpoint.channel_values.insert("items".into(), ChannelValue::new(vec![format!("item {step}")]));
        checkpoint.channel_versions.insert("items".into(), v.as_str().into());
        let new_versions = checkpoint.channel_versions.clone();
        let metadata = CheckpointMetadata::new(CheckpointSource::Loop, step as i64);
        let begun = Instant::now();
        let saved = if checked {
            let link = ChainLink::new(checkpoint, metadata, new_versions);
            backend.saver.commit(Commit::new(parent.clone(), vec![link], ExpectParent::Latest)).await
        } else {
            backend.saver.put(&parent, checkpoint, metadata, new_versions).await
        };
        latencies.push(begun.elapsed());
        parent = saved.expect("put");
        version = Some(v);
    }
    latencies
}

async fn overhead(backend: Backend) {
    let run = mnemograph_core::checkpoint::backend::uuid6(0);
    let (plain_thread, checked_thread) = (format!("plain-{run}"), format!("checked-{run}"));
    let plain = chain(&backend, &plain_thread, false).await;
    let checked = chain(&backend, &checked_thread, true).await;
    assert_eq!(single_chain(&*backend.saver, &plain_thread).await, PUTS);
    assert_eq!(single_chain(&*backend.saver, &checked_thread).await, PUTS);
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "RESULT overhead saver={} puts={PUTS} put_p50={:.0}us put_p99={:.0}us \
         commit_latest_p50={:.0}us commit_latest_p99={:.0}us",
        backend.name,
        us(plain.percentile(50.0)),
        us(plain.percentile(99.0)),
        us(checked.percentile(50.0)),
        us(checked.percentile(99.0)),
    );
    backend.cleanup(&[plain_thread, checked_thread]).await;
}

#[tokio::test]
async fn parent_check_cost_in_memory() {
    overhead(backend::memory()).await;
}

#[tokio::test]
async fn parent_check_cost_on_mysql() {
    if let Some(backend) = backend::mysql("overhead", 2).await {
        overhead(backend).await;
    }
}

#[tokio::test]
async fn parent_check_cost_on_redis() {
    if let Some(backend) = backend::redis("overhead").await {
        overhead(backend).await;
    }
}
