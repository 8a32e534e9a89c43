//! [`Fenced`]: the saver a claimed run runs on. Every write is checked against the queue's
//! database: the claim's worker must still hold the run under the claim's attempt, the fencing
//! token, so a worker that lost its run to another cannot store over the new owner's checkpoints.
//!
//! With the cluster's own MySQL saver ([`Cluster::with_saver`](super::Cluster::with_saver)) the
//! checkpoint and pending-write writes check inside their own transaction, with a lock on the
//! run's row ([`mnemograph_checkpoint_mysql::Fence`]): a takeover waits for a write in flight,
//! and a write after a takeover sees it. Nothing can slip between check and write.
//!
//! Any other saver's writes (and the few writes that are not checkpoints) are checked just
//! before they are made, in a statement of their own, which also demands that the lease have at
//! least [`Fenced::margin`] left: a takeover needs the lease to have run out, so a write that
//! completes within the margin after its check cannot land after another worker took the run
//! over. What remains there is a write still in flight longer than the margin after its check; a
//! saver that compares the parent on commit (every saver of this workspace) then still refuses it
//! once the new owner committed, and only a stale checkpoint stored before the new owner's first
//! commit can land, which makes that commit fail with a conflict instead of being overwritten.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint_mysql::{Fence, MySqlCheckpointer};
use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, DynCheckpointer, ListOptions, PruneStrategy,
};
use mnemograph_core::value::ChannelValue;
use sqlx::mysql::MySqlPool;

use crate::queue::Claim;

/// How many times a check whose query failed is tried before the write is refused.
const CHECK_TRIES: u32 = 3;
/// The wait after the first failed check; doubled after each.
const CHECK_BACKOFF: Duration = Duration::from_millis(50);

/// The condition on a `server_runs` row that the claim (run id, worker, attempt, bound in that
/// order) still holds it with its lease running, ending with the lease's end so that a margin
/// can be added to it; the one condition of both kinds of check.
macro_rules! held {
    () => {
        "run_id = ? AND worker = ? AND attempt = ? AND status = 'running' AND lease_until > UTC_TIMESTAMP(6)"
    };
}

/// The check before a write: [`held!`] with a margin of lease left.
const HELD_WITH_MARGIN: &str =
    concat!("SELECT 1 FROM server_runs WHERE ", held!(), " + INTERVAL ? MICROSECOND");

/// `saver` writing `claim`'s run's checkpoints only while the claim holds, checked in each
/// write's transaction against the run's row in the database of `queue`.
pub(super) fn in_commit(saver: &MySqlCheckpointer, queue: &MySqlPool, claim: &Claim) -> MySqlCheckpointer {
    // Named with the queue's database, so a saver on another database of the same server still
    // checks the cluster's runs (and one on another server fails every write loudly).
    let runs = match queue.connect_options().get_database() {
        Some(database) => format!("`{}`.server_runs", database.replace('`', "``")),
        None => "server_runs".to_owned(),
    };
    let fence = Fence::new(format!("SELECT COUNT(*) FROM {runs} WHERE {} LOCK IN SHARE MODE", held!()))
        .bind(claim.run.run_id.as_str())
        .bind(claim.worker.as_str())
        .bind_int(i64::from(claim.attempt));
    saver.fenced(fence)
}

/// A saver that stores only while the claim holds.
pub(super) struct Fenced {
    saver: Arc<dyn DynCheckpointer>,
    /// Whether `saver` checks the claim inside its checkpoint and pending-write transactions.
    checks_in_commit: bool,
    pool: MySqlPool,
    claim: Claim,
    /// How much of its lease the claim must have left for a write to go ahead.
    margin: Duration,
    /// Set once a write was refused; every later write is refused without asking.
    refused: Arc<AtomicBool>,
}

impl Fenced {
    /// `saver` for `claim`'s run, checked on `pool` before each write; `refused` is set when a
    /// write is refused.
    pub(super) fn new(
        saver: Arc<dyn DynCheckpointer>,
        pool: MySqlPool,
        claim: Claim,
        margin: Duration,
        refused: Arc<AtomicBool>,
    ) -> Self {
        Self { saver, checks_in_commit: false, pool, claim, margin, refused }
    }

    /// Like [`new`](Self::new), on a saver that checks the claim inside its checkpoint and
    /// pending-write transactions ([`in_commit`]):
    /// those writes are not checked before.
    pub(super) fn checking_in_commit(mut self) -> Self {
        self.checks_in_commit = true;
        self
    }

    /// Runs `write`, a checkpoint or pending-write write when `checkpoint`: checked first unless
    /// the saver checks it in its transaction; a refusal, either way, refuses every later write.
    async fn guard<T>(
        &self,
        checkpoint: bool,
        write: impl Future<Output = Result<T, CheckpointError>>,
    ) -> Result<T, CheckpointError> {
        if checkpoint && self.checks_in_commit {
            if self.refused.load(Ordering::Acquire) {
                return Err(self.refusal());
            }
        } else {
            self.check().await?;
        }
        let written = write.await;
        if matches!(&written, Err(e) if e.is_fenced()) {
            self.refused.store(true, Ordering::Release);
        }
        written
    }

    /// Whether the claim still holds with the margin left; a query that keeps failing counts as
    /// not holding, since nothing proves the run is still this worker's.
    async fn holds(&self) -> bool {
        let mut backoff = CHECK_BACKOFF;
        for attempt in 1..=CHECK_TRIES {
            let found = sqlx::query(HELD_WITH_MARGIN)
                .bind(&self.claim.run.run_id)
                .bind(&self.claim.worker)
                .bind(self.claim.attempt)
                .bind(self.margin.as_micros() as u64)
                .fetch_optional(&self.pool)
                .await;
            match found {
                Ok(row) => return row.is_some(),
                Err(e) if attempt < CHECK_TRIES => {
                    tracing::warn!(run_id = %self.claim.run.run_id, error = %e, "checking a run's lease failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff *= 2;
                }
                Err(e) => {
                    tracing::warn!(run_id = %self.claim.run.run_id, error = %e, "checking a run's lease failed");
                }
            }
        }
        false
    }

    /// Lets a write go ahead, or refuses it.
    async fn check(&self) -> Result<(), CheckpointError> {
        if !self.refused.load(Ordering::Acquire) && self.holds().await {
            return Ok(());
        }
        self.refused.store(true, Ordering::Release);
        Err(self.refusal())
    }

    /// The error of a refused write.
    fn refusal(&self) -> CheckpointError {
        CheckpointError::Fenced(format!(
            "run {} is no longer held by worker {} under attempt {}",
            self.claim.run.run_id, self.claim.worker, self.claim.attempt
        ))
    }
}

impl Checkpointer for Fenced {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.saver.get_tuple(config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.saver.list(config, options).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.guard(true, self.saver.put(config, checkpoint, metadata, new_versions)).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.guard(true, self.saver.put_writes(config, writes, task_id, task_path)).await
    }

    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        self.guard(true, self.saver.commit(commit)).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.guard(false, self.saver.delete_thread(thread_id)).await
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        self.guard(false, self.saver.delete_for_runs(run_ids)).await
    }

    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        self.guard(false, self.saver.copy_thread(source_thread_id, target_thread_id)).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        self.guard(false, self.saver.prune(thread_ids, strategy)).await
    }

    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        self.saver.remembered_latest(config)
    }

    fn get_next_version(&self, current: Option<&str>) -> String {
        self.saver.get_next_version(current)
    }
}

#[cfg(test)]
mod tests {
    use mnemograph_core::checkpoint::{CheckpointSource, InMemoryCheckpointer};
    use sqlx::Connection;

    use super::*;
    use crate::queue::{Lease, MySqlRunQueue, QueuedRun};

    /// A fresh database on `MYSQL_URL`'s server; `None` (after saying why) without one outside CI.
    async fn database() -> Option<String> {
        let base = std::env::var("MYSQL_URL")
            .unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".to_owned());
        let (server, _) = base.rsplit_once('/').expect("a database URL");
        let connect = sqlx::MySqlConnection::connect(&format!("{server}/information_schema"));
        let Ok(Ok(mut conn)) = tokio::time::timeout(Duration::from_secs(5), connect).await else {
            let why = format!("MySQL at {server} is unreachable");
            assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "{why} (CI is set, so this fails)");
            eprintln!("SKIPPED: {why}");
            return None;
        };
        let name = format!("server_fence_{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
        sqlx::raw_sql(&format!("CREATE DATABASE `{name}`")).execute(&mut conn).await.unwrap();
        Some(format!("{server}/{name}"))
    }

    /// The queue on `url`, set up, with run `r` of thread `T` queued, and a short lease.
    async fn queued(url: &str) -> (MySqlRunQueue, Lease) {
        let queue = MySqlRunQueue::connect(url).await.unwrap();
        queue.setup().await.unwrap();
        queue.enqueue(&QueuedRun::new("r", "T", serde_json::json!({}))).await.unwrap();
        (queue, Lease { ttl: Duration::from_millis(900) })
    }

    /// Drops the database of `url`.
    async fn drop_database(url: &str) {
        let mut conn = sqlx::MySqlConnection::connect(url).await.unwrap();
        let name = url.rsplit_once('/').unwrap().1;
        sqlx::raw_sql(&format!("DROP DATABASE `{name}`")).execute(&mut conn).await.unwrap();
    }

    async fn put(saver: &Fenced, step: i64) -> Result<CheckpointConfig, CheckpointError> {
        let checkpoint = Checkpoint {
            v: 4,
            id: format!("1ef00000-0000-6000-8000-00000000000{step}"),
            ..Checkpoint::default()
        };
        let metadata = CheckpointMetadata::new(CheckpointSource::Loop, step);
        Checkpointer::put(
            saver,
            &CheckpointConfig::thread("T"),
            checkpoint,
            metadata,
            ChannelVersions::default(),
        )
        .await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stale_owners_checkpoint_writes_are_refused_and_the_new_owners_stored() {
        let Some(url) = database().await else { return };
        let (queue, lease) = queued(&url).await;
        let saver: Arc<dyn DynCheckpointer> = Arc::new(InMemoryCheckpointer::new());
        let fenced = |claim: Claim, refused: &Arc<AtomicBool>| {
            Fenced::new(saver.clone(), queue.pool().clone(), claim, lease.renew_every(), refused.clone())
        };
        let first = queue.claim("old", lease).await.unwrap().expect("a claim");
        let old_refused = Arc::new(AtomicBool::new(false));
        let old = fenced(first, &old_refused);
        put(&old, 0).await.expect("the holder writes");
        tokio::time::sleep(lease.ttl).await;
        let taken = queue.claim("new", lease).await.unwrap().expect("taken over");
        assert_eq!(taken.attempt, 2);
        let refused = put(&old, 1).await;
        assert!(refused.is_err(), "the old owner's checkpoint is refused");
        let writes =
            Checkpointer::put_writes(&old, &CheckpointConfig::thread("T"), Vec::new(), "task", "").await;
        assert!(writes.is_err(), "and so are its writes");
        assert!(old_refused.load(Ordering::Acquire), "the refusal is flagged for the worker");
        let new = fenced(taken, &Arc::new(AtomicBool::new(false)));
        put(&new, 2).await.expect("the new owner writes");
        let stored = saver.list(Some(&CheckpointConfig::thread("T")), ListOptions::default()).await.unwrap();
        let steps: Vec<i64> = stored.iter().map(|t| t.metadata.step).collect();
        assert_eq!(steps, [2, 0], "the stale checkpoint is not stored");
        drop_database(&url).await;
    }

    /// On the cluster's MySQL saver the claim is checked inside each write's transaction: the
    /// stale owner's writes are refused by the saver itself (no check before them), and the
    /// refusal is flagged for the worker as before.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stale_owners_writes_are_refused_inside_their_transaction() {
        let Some(url) = database().await else { return };
        let (queue, lease) = queued(&url).await;
        let saver = MySqlCheckpointer::connect(&url).await.unwrap();
        saver.setup().await.unwrap();
        // No margin: a check before the write would let every write through while the lease runs.
        let fenced = |claim: Claim, refused: &Arc<AtomicBool>| {
            let inside = Arc::new(in_commit(&saver, queue.pool(), &claim));
            Fenced::new(inside, queue.pool().clone(), claim, Duration::ZERO, refused.clone())
                .checking_in_commit()
        };
        let first = queue.claim("old", lease).await.unwrap().expect("a claim");
        let old_refused = Arc::new(AtomicBool::new(false));
        let old = fenced(first, &old_refused);
        put(&old, 0).await.expect("the holder writes");
        tokio::time::sleep(lease.ttl).await;
        let taken = queue.claim("new", lease).await.unwrap().expect("taken over");
        let refused = put(&old, 1).await;
        assert!(matches!(&refused, Err(e) if e.is_fenced()), "refused by the saver's fence: {refused:?}");
        assert!(old_refused.load(Ordering::Acquire), "the refusal is flagged for the worker");
        let write = vec![("n".to_owned(), ChannelValue::new(1))];
        let writes = Checkpointer::put_writes(&old, &CheckpointConfig::thread("T"), write, "task", "").await;
        assert!(matches!(&writes, Err(e) if e.is_fenced()), "{writes:?}");
        let new = fenced(taken, &Arc::new(AtomicBool::new(false)));
        put(&new, 2).await.expect("the new owner writes");
        let stored = Checkpointer::list(&saver, Some(&CheckpointConfig::thread("T")), ListOptions::default())
            .await
            .unwrap();
        let steps: Vec<i64> = stored.iter().map(|t| t.metadata.step).collect();
        assert_eq!(steps, [2, 0], "the stale checkpoint is not stored");
        drop_database(&url).await;
    }
}
