//! [`MySqlShallowCheckpointer`]: LangGraph's shallow MySQL saver, the latest checkpoint only.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, ExpectParent, ListOptions, PruneStrategy,
};
use mnemograph_checkpoint::value::ChannelValue;
use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use sqlx::MySqlPool;

use crate::commit::connections::Writers;
use crate::commit::{delete, pending_writes, shallow_put};
use crate::error::Result;
use crate::sql::Layout;
use crate::url_options::{self, WriterOptions};
use crate::{copy, migrate, reads, runs};

/// A [`Checkpointer`] that keeps only the latest checkpoint of each thread and namespace, in the
/// tables and row format of LangGraph's `ShallowPyMySQLSaver` (deprecated upstream, kept for
/// databases that use it).
///
/// Each `put` overwrites the thread's checkpoint, replaces the blobs of the channels that changed
/// (one row per channel, not per version) and drops pending writes of older checkpoints. So there
/// is no history: `list` returns at most one checkpoint per thread and namespace, `parent_config`
/// is always `None`, and [`get_tuple`](Checkpointer::get_tuple) with a `checkpoint_id` other than
/// the latest finds nothing (LangGraph's shallow saver returns the latest instead; a caller asking
/// for a checkpoint that was overwritten should learn that it is gone).
///
/// Its tables have the same names as [`MySqlCheckpointer`](crate::MySqlCheckpointer)'s, with
/// another layout, so the two need separate databases; [`setup`](Self::setup) refuses a database
/// holding the full saver's tables.
///
/// # Example
/// ```no_run
/// # async fn demo() -> Result<(), mnemograph_checkpoint_mysql::Error> {
/// use mnemograph_checkpoint_mysql::MySqlShallowCheckpointer;
///
/// let saver = MySqlShallowCheckpointer::connect("mysql://app:secret@db.internal/app_latest").await?;
/// saver.setup().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MySqlShallowCheckpointer {
    /// Shared by clones.
    pool: MySqlPool,
    /// Connections kept for put transactions (see [`crate::commit::connections`]).
    writers: Arc<Writers>,
}

impl fmt::Debug for MySqlShallowCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the pool's own Debug, which prints the connect options and so the password.
        f.debug_struct("MySqlShallowCheckpointer").field("connections", &self.pool.size()).finish()
    }
}

impl MySqlShallowCheckpointer {
    /// Connects a pool to `url`; the URL parameters are those of
    /// [`MySqlCheckpointer::connect`](crate::MySqlCheckpointer::connect).
    ///
    /// # Errors
    /// [`Error::Sqlx`](crate::Error::Sqlx) for a malformed URL or parameter, or when the server
    /// cannot be reached.
    pub async fn connect(url: &str) -> Result<Self> {
        let connect = MySqlConnectOptions::from_str(url)?;
        let options = url_options::url_options(url)?;
        let mut saver = Self::connect_with(connect, options.pool).await?;
        saver.writers = options.writers.writers(&saver.pool);
        Ok(saver)
    }

    /// Connects a pool built from explicit options.
    ///
    /// # Errors
    /// [`Error::Sqlx`](crate::Error::Sqlx) when the server cannot be reached.
    pub async fn connect_with(connect: MySqlConnectOptions, pool: MySqlPoolOptions) -> Result<Self> {
        Ok(Self::from_pool(pool.connect_with(connect).await?))
    }

    /// Uses an existing pool.
    pub fn from_pool(pool: MySqlPool) -> Self {
        let writers = WriterOptions::default().writers(&pool);
        Self { pool, writers }
    }

    /// How many connections this saver keeps open for its put transactions (default 10; 0 keeps
    /// none), beside the pool's; see
    /// [`MySqlCheckpointer::with_write_connections`](crate::MySqlCheckpointer::with_write_connections).
    #[must_use]
    pub fn with_write_connections(mut self, count: usize) -> Self {
        self.writers = WriterOptions { count, ..WriterOptions::default() }.writers(&self.pool);
        self
    }

    /// The connection pool.
    pub fn pool(&self) -> &MySqlPool {
        &self.pool
    }

    /// Creates or upgrades the tables: the shallow saver's 11 migrations, recorded in
    /// `checkpoint_migrations` like the Python `setup()` does. Returns how many were applied. The
    /// notes of [`MySqlCheckpointer::setup`](crate::MySqlCheckpointer::setup) (lock, non-transactional
    /// DDL) apply.
    ///
    /// # Errors
    /// [`Error::Schema`](crate::Error::Schema) when the database holds the full saver's tables
    /// (nothing is changed), otherwise as [`MySqlCheckpointer::setup`](crate::MySqlCheckpointer::setup).
    pub async fn setup(&self) -> Result<usize> {
        migrate::run(&self.pool, migrate::Layout::Shallow).await
    }
}

impl Checkpointer for MySqlShallowCheckpointer {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        reads::get_tuple(&self.pool, Layout::Shallow, config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        reads::list(&self.pool, Layout::Shallow, config, options).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        shallow_put::put(&self.writers, config, &checkpoint, &metadata, &new_versions, false).await?;
        Ok(config.clone().with_checkpoint_id(checkpoint.id))
    }

    /// Each link in turn: its writes, then its checkpoint in a transaction that locks the
    /// namespace's one row and compares it with the parent (which is the latest, the only one
    /// kept) when the link expects that. A later link's check refuses when another writer came
    /// between the links; what the earlier links stored stays, as it does for separate calls.
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        if commit.chain.is_empty() {
            return Err(CheckpointError::empty_chain());
        }
        let mut parent = commit.parent;
        for (i, link) in commit.chain.into_iter().enumerate() {
            if let Some(batch) = &link.writes {
                pending_writes::put_writes(
                    &self.pool,
                    &parent,
                    &batch.writes,
                    &batch.task_id,
                    &batch.task_path,
                    None,
                )
                .await?;
            }
            let expect_latest = commit.expect == ExpectParent::Latest || i > 0;
            let (checkpoint, metadata, versions) = (&link.checkpoint, &link.metadata, &link.new_versions);
            shallow_put::put(&self.writers, &parent, checkpoint, metadata, versions, expect_latest).await?;
            parent = parent.with_checkpoint_id(link.checkpoint.id);
        }
        Ok(parent)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        pending_writes::put_writes(&self.pool, config, &writes, task_id, task_path, None).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        delete::delete_thread(&self.pool, thread_id).await
    }

    /// One transaction: each namespace whose checkpoint a listed run wrote loses its row, blobs
    /// and writes.
    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        runs::delete_for_runs(&self.pool, Layout::Shallow, run_ids).await.map(drop)
    }

    /// One transaction, the rows copied by the server.
    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        copy::copy_thread(&self.pool, Layout::Shallow, source_thread_id, target_thread_id).await
    }

    /// Each namespace holds its latest checkpoint only, so `KeepLatest` changes nothing;
    /// `Delete` removes the threads in one transaction.
    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        runs::prune_shallow(&self.pool, thread_ids, strategy == PruneStrategy::Delete).await
    }
}
