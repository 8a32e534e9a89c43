//! [`PostgresCheckpointer`]: the saver, its connection and its `setup`.

use std::fmt;
use std::str::FromStr;

use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, ListOptions, PruneStrategy,
};
use mnemograph_checkpoint::value::ChannelValue;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;

use crate::error::{backend, Result};
use crate::{commit, copy, delete, migrations, reads, retention, runs, writes};

/// A [`Checkpointer`] storing checkpoints in PostgreSQL, in the tables and row format of
/// LangGraph's Python saver (`langgraph-checkpoint-postgres`): a Python process and a Rust
/// process can share one database and continue each other's threads.
///
/// Cloning is cheap: clones share the connection pool.
#[derive(Clone)]
pub struct PostgresCheckpointer {
    pool: PgPool,
}

impl fmt::Debug for PostgresCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The pool's own Debug prints its options, which include the password.
        f.debug_struct("PostgresCheckpointer")
            .field("connections", &self.pool.size())
            .field("idle", &self.pool.num_idle())
            .finish()
    }
}

impl PostgresCheckpointer {
    /// Connects a pool (10 connections at most) to `url` and checks that the server answers.
    ///
    /// `url` is `postgres://user:password@host:port/database?param=value&...` with sqlx's
    /// parameters (`sslmode`, `sslrootcert`, `application_name`, `options`, ...). TLS needs the
    /// `tls-rustls` (default) or `tls-native-tls` feature. For other pool settings, build the
    /// options and call [`connect_with`](Self::connect_with).
    ///
    /// # Errors
    /// [`Error::Sqlx`](crate::Error::Sqlx) for a malformed URL, or when the server cannot be
    /// reached.
    pub async fn connect(url: &str) -> Result<Self> {
        let options = PgConnectOptions::from_str(url)?;
        Self::connect_with(options, PgPoolOptions::new().max_connections(10)).await
    }

    /// Connects a pool built from explicit options.
    ///
    /// # Errors
    /// [`Error::Sqlx`](crate::Error::Sqlx) when the server cannot be reached.
    pub async fn connect_with(connect: PgConnectOptions, pool: PgPoolOptions) -> Result<Self> {
        Ok(Self::from_pool(pool.connect_with(connect).await?))
    }

    /// Uses an existing pool (e.g. the application's own).
    pub fn from_pool(pool: PgPool) -> Self {
        Self { pool }
    }

    /// The connection pool.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Creates or upgrades the tables: LangGraph's migrations v0..v9, each recorded in
    /// `checkpoint_migrations` once applied. Returns how many were applied (0 when the schema is
    /// current). A database set up by Python's `PostgresSaver.setup()` is current, and the other
    /// way round.
    ///
    /// Several of this crate's processes may call it at once: they take turns on a session
    /// advisory lock. Each migration is safe to apply twice, so a `setup` that stopped half-way
    /// (or races Python's) is completed by the next.
    ///
    /// # Errors
    /// [`Error::Migrate`](crate::Error::Migrate) when the server rejects a migration (e.g.
    /// missing `CREATE` privilege), [`Error::SchemaTooNew`](crate::Error::SchemaTooNew) when a
    /// newer saver has migrated the database, [`Error::Sqlx`](crate::Error::Sqlx) otherwise.
    pub async fn setup(&self) -> Result<usize> {
        migrations::run(&self.pool).await
    }
}

impl Checkpointer for PostgresCheckpointer {
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
        commit::commit(&self.pool, &Commit::put(config, checkpoint, metadata, new_versions)).await
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
        commit::commit(&self.pool, &commit).await
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
