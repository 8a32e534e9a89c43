//! [`Uncached`]: the full saver under [`MySqlCheckpointer`](crate::MySqlCheckpointer)'s read
//! cache, every checkpoint of every thread kept, and its [`Checkpointer`] implementation.

use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, ListOptions, PruneStrategy,
};
use mnemograph_checkpoint::value::ChannelValue;
use sqlx::MySqlPool;

use crate::commit::connections::Writers;
use crate::commit::put::PutTarget;
use crate::commit::{delete, pending_writes};
use crate::delta::DeltaState;
use crate::fence::Fence;
use crate::reads::{get_tuple_cached, list};
use crate::sql::Layout;
use crate::texts::TextsSeen;
use crate::{copy, retention, runs};

/// The full saver without its read cache. Cloning is cheap: clones share the pool, the kept
/// connections and the delta cache.
#[derive(Clone)]
pub(crate) struct Uncached {
    /// Shared by clones; every call takes a connection only for its own statements.
    pub(crate) pool: MySqlPool,
    /// Connections kept for put transactions (see [`crate::commit::connections`]).
    pub(crate) writers: Arc<Writers>,
    /// Delta mode: the channels, the interval and the cache of last stored values; `None` for
    /// plain (LangGraph's) storage.
    pub(crate) delta: Option<Arc<DeltaState>>,
    /// Whether the server gives back the texts this saver stores (see [`TextsSeen`]).
    pub(crate) texts: Arc<TextsSeen>,
    /// The condition checked in each write's transaction; `None` for an unfenced saver.
    pub(crate) fence: Option<Arc<Fence>>,
}

impl Uncached {
    /// A saver on `pool`, putting through `writers`, in plain mode.
    pub(crate) fn new(pool: MySqlPool, writers: Arc<Writers>) -> Self {
        Self { pool, writers, delta: None, texts: Arc::default(), fence: None }
    }

    /// Forgets the values the next delta of `thread_id` would be built on: after rows of the
    /// thread were removed or replaced, a remembered base may no longer be stored.
    fn forget_delta_bases(&self, thread_id: &str) {
        if let Some(delta) = &self.delta {
            delta.forget_thread(thread_id);
        }
    }

    /// What a put of this saver writes to and updates.
    pub(crate) fn put_target(&self) -> PutTarget<'_> {
        PutTarget {
            pool: &self.pool,
            writers: &self.writers,
            delta: self.delta.as_deref(),
            fence: self.fence.as_deref(),
        }
    }
}

impl Checkpointer for Uncached {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        get_tuple_cached(&self.pool, Layout::Full, config, self.delta.as_deref()).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        list(&self.pool, Layout::Full, config, options).await
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
        pending_writes::put_writes(&self.pool, config, &writes, task_id, task_path, self.fence.as_deref())
            .await
    }

    /// Atomic: the parent row is locked inside the put transaction, and the whole chain is one
    /// transaction (one per checkpoint in delta mode).
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        Ok(self.put_target().commit(&commit, None).await?.0)
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        delete::delete_thread(&self.pool, thread_id).await?;
        if let Some(delta) = &self.delta {
            delta.forget_thread(thread_id);
        }
        Ok(())
    }

    /// One transaction; in delta mode the blobs the delta chains of remaining checkpoints are
    /// built on stay.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        let threads = runs::delete_for_runs(&self.pool, Layout::Full, run_ids).await?;
        for thread_id in &threads {
            self.forget_delta_bases(thread_id);
        }
        Ok(())
    }

    /// One transaction, the rows copied by the server.
    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        copy::copy_thread(&self.pool, Layout::Full, source_thread_id, target_thread_id).await?;
        self.forget_delta_bases(target_thread_id);
        Ok(())
    }

    /// One transaction for all the threads; in delta mode the blobs the kept checkpoints' delta
    /// chains are built on stay.
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        retention::prune(&self.pool, thread_ids, strategy).await?;
        for thread_id in thread_ids {
            self.forget_delta_bases(thread_id);
        }
        Ok(())
    }
}
