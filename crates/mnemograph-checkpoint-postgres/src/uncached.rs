//! [`Uncached`]: the saver under [`PostgresCheckpointer`](crate::PostgresCheckpointer)'s read
//! cache, each call on the pool.

use std::fmt;

use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, ListOptions, PruneStrategy,
};
use mnemograph_checkpoint::value::ChannelValue;
use sqlx::PgPool;

use crate::error::backend;
use crate::{commit, copy, delete, reads, retention, runs, writes};

/// The [`Checkpointer`] on LangGraph's Postgres tables, without the read cache. Cloning is
/// cheap: clones share the pool.
#[derive(Clone)]
pub(crate) struct Uncached {
    pub(crate) pool: PgPool,
}

impl fmt::Debug for Uncached {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The pool's own Debug prints its options, which include the password.
        f.debug_struct("Uncached")
            .field("connections", &self.pool.size())
            .field("idle", &self.pool.num_idle())
            .finish()
    }
}

impl Checkpointer for Uncached {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        reads::get_tuple(&self.pool, config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        reads::list(&self.pool, config, options).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.commit(Commit::put(config, checkpoint, metadata, new_versions)).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let mut conn = self.pool.acquire().await.map_err(backend)?;
        writes::put_writes(&mut conn, config, &writes, task_id, task_path).await
    }

    /// One transaction for the whole chain; a commit expecting the latest parent compares it
    /// under a lock of the thread and namespace.
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        Ok(commit::commit(&self.pool, &commit).await?.0)
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        delete::delete_thread(&self.pool, thread_id).await
    }

    /// One statement; blobs stay for `prune` to remove.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        runs::delete_for_runs(&self.pool, run_ids).await
    }

    /// One transaction, the rows copied by the server.
    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        copy::copy_thread(&self.pool, source_thread_id, target_thread_id).await
    }

    /// One transaction for all the threads, on one snapshot.
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        retention::prune(&self.pool, thread_ids, strategy).await
    }
}
