//! [`PostgresCheckpointer`]: the saver, its connection and its `setup`.

use std::fmt;
use std::str::FromStr;

use mnemograph_checkpoint::checkpoint::backend::{Delegate, ReadCache};
use mnemograph_checkpoint::checkpoint::DynCheckpointer;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;

use crate::error::Result;
use crate::migrations;
use crate::uncached::Uncached;

/// A [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) storing checkpoints in PostgreSQL, in the tables and row format of
/// LangGraph's Python saver (`langgraph-checkpoint-postgres`): a Python process and a Rust
/// process can share one database and continue each other's threads.
///
/// It remembers the checkpoint it stored last for each of the 1024 most recently written threads
/// ([`with_read_cache`](Self::with_read_cache)): a run reading its thread back asks the server
/// only whether that checkpoint is still the latest, unchanged (its document and metadata hash
/// as stored), and for its pending writes, instead of moving every blob again. Anything another
/// process changed makes the read the full one. Blobs are not compared: LangGraph never rewrites
/// one (each is keyed by its channel and version), so only an edit by hand goes unseen.
///
/// Cloning is cheap: clones share the connection pool and the read cache.
#[derive(Clone)]
pub struct PostgresCheckpointer {
    layer: ReadCache<Uncached>,
}

impl fmt::Debug for PostgresCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The pool's own Debug prints its options, which include the password.
        let pool = self.pool();
        f.debug_struct("PostgresCheckpointer")
            .field("connections", &pool.size())
            .field("idle", &pool.num_idle())
            .field("remembered_threads", &self.layer.remembered_threads())
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
        Self { layer: ReadCache::new(Uncached { pool }) }
    }

    /// Remembers the last checkpoint of this many threads (1024 by default; 0 turns the cache
    /// off, and every read is the full one).
    #[must_use]
    pub fn with_read_cache(self, threads: usize) -> Self {
        Self { layer: ReadCache::with_capacity(self.layer.into_saver(), threads) }
    }

    /// The connection pool.
    pub fn pool(&self) -> &PgPool {
        &self.layer.saver().pool
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
        migrations::run(self.pool()).await
    }
}

/// A saver through its read cache: every `Checkpointer` call goes to the layer.
impl Delegate for PostgresCheckpointer {
    fn saver(&self) -> &dyn DynCheckpointer {
        &self.layer
    }
}
