//! A saver whose checkpoint saves start late, as on a loaded server or a slow network.
//!
//! Under `async` durability a checkpoint is saved while the next step runs; what the mode may lose
//! is that save, when the next step's tasks finish before it. On a fast saver the nodes of the
//! workload hardly ever outrun a save, so half of the harness's threads run their workers on this
//! wrapper (see [`Pace`](crate::pace::Pace)): each commit (a step's checkpoint, with its last
//! task's writes) waits a seeded random time before it is sent. Every call is otherwise passed on
//! unchanged, the atomic commit included, so a save is as durable as the saver makes it; only its
//! start moves.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, DynCheckpointer, ListOptions,
};
use mnemograph_core::value::ChannelValue;
use xxhash_rust::xxh3::xxh3_64;

/// `inner`, with each checkpoint save delayed by up to `max_delay`.
pub struct SlowSaves {
    /// The saver under test.
    inner: Arc<dyn DynCheckpointer>,
    /// Seeds the delays (the worker's seed and incarnation).
    seed: String,
    /// Upper bound of one delay.
    max_delay: Duration,
    /// Saves so far, to draw each one's delay.
    saves: AtomicU64,
}

impl std::fmt::Debug for SlowSaves {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SlowSaves").field("max_delay", &self.max_delay).finish_non_exhaustive()
    }
}

impl SlowSaves {
    /// Wraps `inner`; the delays are a function of `seed` and the order of the saves.
    pub fn new(inner: Arc<dyn DynCheckpointer>, seed: String, max_delay: Duration) -> Self {
        Self { inner, seed, max_delay, saves: AtomicU64::new(0) }
    }

    /// The next save's delay.
    fn delay(&self) -> Duration {
        let n = self.saves.fetch_add(1, Ordering::Relaxed);
        let max = self.max_delay.as_micros() as u64;
        Duration::from_micros(xxh3_64(format!("{}:{n}", self.seed).as_bytes()) % (max + 1))
    }
}

impl Checkpointer for SlowSaves {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.inner.get_tuple(config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.inner.list(config, options).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.inner.put(config, checkpoint, metadata, new_versions).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.inner.put_writes(config, writes, task_id, task_path).await
    }

    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        tokio::time::sleep(self.delay()).await;
        self.inner.commit(commit).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.inner.delete_thread(thread_id).await
    }

    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        self.inner.remembered_latest(config)
    }

    fn get_next_version(&self, current: Option<&str>) -> String {
        self.inner.get_next_version(current)
    }
}

#[cfg(test)]
mod tests {
    use mnemograph_core::checkpoint::InMemoryCheckpointer;

    use super::*;

    #[test]
    fn delays_are_seeded_and_bounded() {
        let saver = |seed: &str| {
            let inner: Arc<dyn DynCheckpointer> = Arc::new(InMemoryCheckpointer::new());
            SlowSaves::new(inner, seed.to_owned(), Duration::from_micros(300))
        };
        let (a, b) = (saver("1:0"), saver("1:0"));
        let delays: Vec<Duration> = (0..20).map(|_| a.delay()).collect();
        assert_eq!(delays, (0..20).map(|_| b.delay()).collect::<Vec<_>>());
        assert!(delays.iter().all(|d| *d <= Duration::from_micros(300)));
        assert!(delays.iter().any(|d| *d != delays[0]));
    }
}
