//! [`SqliteCheckpointer`]: the saver, its constructors and its [`Checkpointer`] implementation.

use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, ListOptions, PruneStrategy,
};
use mnemograph_checkpoint::value::ChannelValue;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::SqlitePool;

use crate::error::Result;
use crate::open::open_pool;
use crate::options::{connect_options, pool_options};
use crate::{copy, reads, remove, schema, write};

/// A [`Checkpointer`] storing checkpoints in one SQLite file, in the tables and bytes of
/// LangGraph's Python SQLite saver (`langgraph-checkpoint-sqlite`): a Python process and a Rust
/// process can take turns on the same threads, paused ones included.
///
/// Cloning is cheap: clones share the connection pool.
///
/// # Example
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), mnemograph_checkpoint_sqlite::Error> {
/// use std::time::Duration;
///
/// use mnemograph_checkpoint_sqlite::{connect_options, SqliteCheckpointer};
/// use sqlx::sqlite::SqlitePoolOptions;
///
/// // A shorter wait for other writers than the default five seconds.
/// let options = connect_options(":memory:")?.busy_timeout(Duration::from_millis(500));
/// let saver = SqliteCheckpointer::connect_with(options, SqlitePoolOptions::new().max_connections(1)).await?;
/// # let _ = saver;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteCheckpointer {
    pool: SqlitePool,
}

impl SqliteCheckpointer {
    /// Opens (creating when missing) the database `target` — a file path, a `sqlite://` or
    /// `sqlite:` URL, or `:memory:` — with the options of [`connect_options`], and creates the
    /// tables when missing ([`setup`](Self::setup)).
    ///
    /// An in-memory database gets a single connection, kept open for the saver's life: the
    /// database is gone when the saver and its clones are dropped.
    ///
    /// # Errors
    /// [`Error::Sqlx`](crate::Error::Sqlx) when the URL is malformed or the file cannot be opened or created;
    /// [`Error::Busy`](crate::Error::Busy) when another connection holds the database locked past the busy timeout
    /// while the tables are created.
    pub async fn connect(target: &str) -> Result<Self> {
        Self::connect_with(connect_options(target)?, pool_options(target)).await
    }

    /// Opens a pool built from explicit options (see [`connect_options`] for the defaults this
    /// crate sets), and creates the tables when missing.
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_with(connect: SqliteConnectOptions, pool: SqlitePoolOptions) -> Result<Self> {
        let pool = open_pool(connect, pool).await?;
        let saver = Self::from_pool(pool);
        saver.setup().await?;
        Ok(saver)
    }

    /// Uses an existing pool as it is; call [`setup`](Self::setup) once if the tables may be
    /// missing.
    pub fn from_pool(pool: SqlitePool) -> Self {
        Self { pool }
    }

    /// Creates the `checkpoints` and `writes` tables when missing, as LangGraph's `setup()` does
    /// (the same statements), so either side can open a database the other created.
    ///
    /// # Errors
    /// [`Error::Busy`](crate::Error::Busy) when another connection holds the database locked past the busy timeout;
    /// [`Error::Sqlx`](crate::Error::Sqlx) otherwise (e.g. a read-only file).
    pub async fn setup(&self) -> Result<()> {
        schema::setup(&self.pool).await
    }

    /// The connection pool.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }
}

impl Checkpointer for SqliteCheckpointer {
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
        write::commit(&self.pool, Commit::put(config, checkpoint, metadata, new_versions)).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        write::put_writes(&self.pool, config, &writes, task_id, task_path).await
    }

    /// Atomic: the whole chain is one transaction, which holds the database's write lock from
    /// the parent check to the last row.
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        write::commit(&self.pool, commit).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        remove::delete_thread(&self.pool, thread_id).await
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        remove::delete_for_runs(&self.pool, run_ids).await
    }

    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        copy::copy_thread(&self.pool, source_thread_id, target_thread_id).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        remove::prune(&self.pool, thread_ids, strategy).await
    }
}
