//! [`ArchivingSaver`]: the checkpointer of the agent, which stores a completed round in both
//! stores or in neither.
//!
//! A round reaches the stores in one commit (see [`snapshot`](crate::snapshot)). When a round is
//! staged for the committing thread ([`pending`](crate::pending)), the commit is:
//!
//! 1. open a MySQL transaction and insert the question, the answer, the tool calls and the id of
//!    the checkpoint being committed ([`archived_rounds`](crate::archived_rounds));
//! 2. commit the checkpoint to Redis (checked against the checkpoint the round started from),
//!    carrying the round itself in its metadata under [`ROUND_KEY`];
//! 3. commit the MySQL transaction.
//!
//! Step 2 is the round's commit point: a round is stored once its checkpoint is in Redis, and
//! not before. A failed insert (1) stops before Redis is touched, and a refused or failed Redis
//! commit (2) rolls the transaction back: either way the commit fails, the run fails, the client
//! gets an error and both stores hold what they held before the round, so asking again puts
//! the question in the thread once. Archiving first is what makes this hold under concurrency:
//! the Redis commit is the one place where a concurrent round on another process is refused,
//! and a refused round must not be in the archive; archiving after Redis (or restoring the
//! previous snapshot after a failed archive) would instead race with such a round, since a
//! restored snapshot can overwrite one committed in between.
//!
//! Past the commit point the round is never undone, only completed: when the process dies
//! between 2 and 3, or the MySQL `COMMIT` fails, the snapshot holds a round the archive lacks,
//! and the checkpoint carries everything needed to archive it. The thread's next round (and
//! `GET /history`) first archives it from there ([`ArchivingSaver::archive_latest_round`]), and
//! the `archived_rounds` row makes that exact and safe to repeat. Undoing instead would need the
//! previous snapshot, which shallow mode has already dropped, and a process that died cannot
//! undo anything; so a crash at any point leaves the round in neither store (before 2) or, once
//! its thread is used again, in both (after 2). A `COMMIT` that fails is retried at once the
//! same way, and the client is told the round is stored, since it is: asking again would put
//! the question in the thread twice.
//!
//! The three steps run in a task of their own, so a client leaving mid-commit (which drops the
//! run) cannot stop them half way.
//!
//! Every other commit (cold-start rebuilds, state updates through the API, the steps of a run
//! before its last) passes through, after one check: when the thread's latest checkpoint carries
//! a round the archive lacks, that round is archived first, since the commit is about to replace
//! the checkpoint that carries it. If that archiving fails, so does the commit. Deleting a thread
//! (through the API) makes the same check first: the archive keeps every stored round for good,
//! whatever happens to the thread.
//!
//! The round in a checkpoint's metadata is this saver's own record: the checkpoints it serves
//! (to the graph, and through it as the state and history API clients read) leave it out, and
//! only Redis, read by the saver itself, keeps it.

use std::sync::Arc;

use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource,
    CheckpointTuple, Checkpointer, Commit, ListOptions, PruneStrategy,
};
use mnemograph_core::value::ChannelValue;

use crate::archive::Archive;
use crate::error::Error;
use crate::pending::{PendingRounds, StagedRound};

/// The key of a round's checkpoint metadata under which the checkpoint carries its round (a
/// [`StagedRound`] as JSON), so that the archive can be completed from the snapshot.
pub const ROUND_KEY: &str = "blog_round";

/// The round a checkpoint was committed with, from its metadata; `None` for any other
/// checkpoint (a cold-start rebuild, a run without a conversation) or an unreadable one.
pub fn round_of(metadata: &CheckpointMetadata) -> Option<StagedRound> {
    serde_json::from_value(metadata.extra.get(ROUND_KEY)?.clone()).ok()
}

/// The Redis saver, archiving each staged round in the same commit; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct ArchivingSaver {
    /// The snapshot store.
    redis: RedisCheckpointer,
    /// The archive.
    archive: Archive,
    /// Rounds waiting for their commit.
    pending: Arc<PendingRounds>,
}

impl ArchivingSaver {
    /// `redis`, archiving into `archive` the rounds staged in `pending`.
    pub fn new(redis: RedisCheckpointer, archive: Archive, pending: Arc<PendingRounds>) -> Self {
        Self { redis, archive, pending }
    }

    /// Steps 1 to 3 of the [module docs](self).
    async fn commit_round(
        redis: RedisCheckpointer,
        archive: Archive,
        round: StagedRound,
        mut commit: Commit,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let Some(last) = commit.chain.last_mut() else { return Checkpointer::commit(&redis, commit).await };
        let checkpoint_id = last.checkpoint.id.clone();
        let record = serde_json::to_value(&round).map_err(|e| CheckpointError::Backend(Box::new(e)))?;
        last.metadata.extra.insert(ROUND_KEY.to_owned(), record);
        let tx = archive.begin_round(&round, Some(&checkpoint_id)).await.map_err(backend)?;
        // On error `tx` is dropped here, which rolls it back.
        let saved = Checkpointer::commit(&redis, commit).await?;
        if let Err(e) = tx.commit().await {
            // The round is stored (step 2 is its commit point): complete the archive, now or
            // from the snapshot before the thread's next round.
            tracing::warn!(
                thread_id = %round.thread_id,
                error = %Error::from(e).chain(),
                "the archive transaction did not commit; archiving the round again"
            );
            if let Err(e) = archive.archive_round(&round, &checkpoint_id).await {
                tracing::error!(
                    thread_id = %round.thread_id,
                    error = %e.chain(),
                    "the round is in the snapshot only; it is archived before the thread's next round"
                );
            }
        }
        Ok(saved)
    }
}

impl ArchivingSaver {
    /// The archive the rounds go to.
    pub fn archive(&self) -> &Archive {
        &self.archive
    }

    /// The round the latest checkpoint of `thread_id` was committed with, and that checkpoint's
    /// id; `None` without a checkpoint or when it carries no round. Read from Redis itself, since
    /// what this saver serves leaves the round out.
    ///
    /// # Errors
    /// A Redis failure.
    pub async fn latest_round(
        &self,
        thread_id: &str,
    ) -> Result<Option<(String, StagedRound)>, CheckpointError> {
        let head = CheckpointConfig::thread(thread_id);
        let latest = match Checkpointer::remembered_latest(&self.redis, &head) {
            Some(tuple) => Some(tuple),
            None => Checkpointer::get_tuple(&self.redis, &head).await?,
        };
        Ok(latest.and_then(|tuple| Some((tuple.checkpoint.id.clone(), round_of(&tuple.metadata)?))))
    }

    /// Archives the round the latest checkpoint of `thread_id` carries, unless the archive holds
    /// it already; `true` when it was missing and is now written. Checkpoints without a round
    /// (cold-start rebuilds, runs without a conversation) need nothing.
    ///
    /// # Errors
    /// [`Error::Graph`] when Redis fails, [`Error::Archive`] when MySQL does: the archive still
    /// lacks the round then, and nothing may replace the checkpoint that carries it.
    pub async fn archive_latest_round(&self, thread_id: &str) -> Result<bool, Error> {
        let latest = self.latest_round(thread_id).await.map_err(mnemograph_core::Error::from)?;
        let Some((checkpoint_id, round)) = latest else { return Ok(false) };
        let written = self.archive.archive_round(&round, &checkpoint_id).await?;
        if written {
            tracing::warn!(
                thread_id,
                checkpoint_id,
                "the archive lacked the round of the latest checkpoint; archived it from there"
            );
        }
        Ok(written)
    }

    /// [`archive_latest_round`](Self::archive_latest_round) before a write replaces the thread's
    /// latest checkpoint; see the [module docs](self).
    async fn archive_round_being_replaced(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.archive_latest_round(thread_id).await.map(drop).map_err(backend)
    }
}

/// `tuple` without the round its metadata carries: the round is this saver's own record, so
/// what it serves (to the graph, and through it to API clients' state and history) leaves it
/// out, while Redis keeps it.
fn hide_round(mut tuple: CheckpointTuple) -> CheckpointTuple {
    tuple.metadata.extra.remove(ROUND_KEY);
    tuple
}

/// A crate error as a checkpointer error, its chain kept as the source.
fn backend(e: Error) -> CheckpointError {
    CheckpointError::Backend(Box::new(e))
}

impl Checkpointer for ArchivingSaver {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        Ok(Checkpointer::get_tuple(&self.redis, config).await?.map(hide_round))
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        Ok(Checkpointer::list(&self.redis, config, options).await?.into_iter().map(hide_round).collect())
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        if config.checkpoint_ns.is_empty() {
            self.archive_round_being_replaced(&config.thread_id).await?;
        }
        Checkpointer::put(&self.redis, config, checkpoint, metadata, new_versions).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        Checkpointer::put_writes(&self.redis, config, writes, task_id, task_path).await
    }

    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        // A round ends with a checkpoint of the superstep loop, at the root, at the step whose
        // last node staged it.
        let last = commit.chain.last().map(|link| &link.metadata);
        let step = last.filter(|m| m.source == CheckpointSource::Loop).map(|m| m.step);
        let staged = match step {
            Some(step) if commit.parent.checkpoint_ns.is_empty() => {
                self.pending.take_staged(&commit.parent.thread_id, step)
            }
            _ => None,
        };
        let Some(round) = staged else {
            if commit.parent.checkpoint_ns.is_empty() {
                self.archive_round_being_replaced(&commit.parent.thread_id).await?;
            }
            return Checkpointer::commit(&self.redis, commit).await;
        };
        let task = tokio::spawn(Self::commit_round(self.redis.clone(), self.archive.clone(), round, commit));
        task.await.map_err(|e| backend(Error::from(e)))?
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.archive_round_being_replaced(thread_id).await?;
        Checkpointer::delete_thread(&self.redis, thread_id).await
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        Checkpointer::delete_for_runs(&self.redis, run_ids).await
    }

    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        Checkpointer::copy_thread(&self.redis, source_thread_id, target_thread_id).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        Checkpointer::prune(&self.redis, thread_ids, strategy).await
    }

    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        Checkpointer::remembered_latest(&self.redis, config).map(hide_round)
    }

    fn get_next_version(&self, current: Option<&str>) -> String {
        Checkpointer::get_next_version(&self.redis, current)
    }
}
