//! [`MySqlCheckpointer`]: the full saver, every checkpoint of every thread kept.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::backend::{Delegate, ReadCache};
use mnemograph_checkpoint::checkpoint::DynCheckpointer;
use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use sqlx::MySqlPool;

use crate::delta::{DeltaChannels, DeltaState};
use crate::error::Result;
use crate::fence::Fence;
use crate::uncached::Uncached;
use crate::url_options::{url_options, WriterOptions};
use crate::{migrate, retention};

/// A [`Checkpointer`] storing checkpoints in MySQL 8.0.19+ or MariaDB 10.7+, in the tables and
/// row format of LangGraph's Python MySQL saver (`langgraph-checkpoint-mysql`).
///
/// A Python process and a Rust process can share one database: each reads what the other wrote,
/// as far as the channel values' serialization allows (LangGraph's `"msgpack"` type tag).
///
/// Cloning is cheap: clones share the connection pool (and, in delta mode, the cache).
///
/// List channels such as `messages` can be stored as deltas instead of full copies at every
/// version ([`with_delta_channels`](Self::with_delta_channels), Rust-only; see [`DeltaChannels`]).
///
/// # Example
/// ```no_run
/// # async fn demo() -> Result<(), mnemograph_checkpoint_mysql::Error> {
/// use mnemograph_checkpoint_mysql::MySqlCheckpointer;
///
/// let saver = MySqlCheckpointer::connect("mysql://app:secret@db.internal/app?max-connections=20").await?;
/// saver.setup().await?; // once per database; a no-op when it is up to date
/// // Keep the ten newest checkpoints of a thread, e.g. from a nightly job.
/// saver.prune("user-42", 10).await?;
/// # Ok(()) }
/// ```
///
/// [`Checkpointer`]: mnemograph_checkpoint::checkpoint::Checkpointer
#[derive(Clone)]
pub struct MySqlCheckpointer {
    /// The saver behind the cache of the checkpoints it stored last (see
    /// [`with_read_cache`](Self::with_read_cache)).
    layer: ReadCache<Uncached>,
}

impl fmt::Debug for MySqlCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The pool's own Debug prints its options, which include the password.
        let uncached = self.uncached();
        f.debug_struct("MySqlCheckpointer")
            .field("connections", &uncached.pool.size())
            .field("idle", &uncached.pool.num_idle())
            .field("writers", &uncached.writers)
            .field("delta", &uncached.delta.as_ref().map(|d| &d.config))
            .field("read_cache", &self.layer.capacity())
            .finish()
    }
}

impl MySqlCheckpointer {
    /// Connects a pool to `url` and checks that the server answers.
    ///
    /// `url` is `mysql://user:password@host:port/database?param=value&...`. Parameters read by
    /// sqlx:
    ///
    /// | parameter | meaning |
    /// |---|---|
    /// | `ssl-mode` | `disabled`, `preferred` (default), `required`, `verify_ca`, `verify_identity` |
    /// | `ssl-ca`, `ssl-cert`, `ssl-key` | PEM files: CA bundle, client certificate and key |
    /// | `socket` | a Unix socket path instead of host and port |
    /// | `charset`, `collation` | connection character set (default `utf8mb4`) |
    /// | `statement-cache-capacity` | prepared statements kept per connection (default 100) |
    ///
    /// and by this crate, for the pool:
    ///
    /// | parameter | default | meaning |
    /// |---|---|---|
    /// | `max-connections` | 10 | pool size |
    /// | `min-connections` | 0 | connections kept open when idle |
    /// | `acquire-timeout` | 30 | seconds a call waits for a free connection |
    /// | `ping-after-idle` | 1 | a pooled connection idle for at least this many seconds is pinged before use (0: always) |
    /// | `write-connections` | 10 | connections kept open for put transactions, beside the pool; puts wait for one when all are busy ([`with_write_connections`](Self::with_write_connections)) |
    /// | `delta-channels` | none | comma-separated channels stored as deltas ([`DeltaChannels`]) |
    /// | `delta-snapshot-every` | 32 | full value at least every this many versions of those |
    ///
    /// TLS needs the `tls-rustls` (default) or `tls-native-tls` feature. For anything else, build
    /// the options yourself and call [`connect_with`](Self::connect_with).
    ///
    /// # Errors
    /// [`Error::Sqlx`](crate::Error::Sqlx) for a malformed URL or parameter, or when the server
    /// cannot be reached.
    pub async fn connect(url: &str) -> Result<Self> {
        let connect = MySqlConnectOptions::from_str(url)?;
        let delta = DeltaChannels::from_url(url)?;
        let options = url_options(url)?;
        let saver = Self::connect_with(connect, options.pool).await?.with_writers(&options.writers);
        Ok(match delta {
            Some(delta) => saver.with_delta(delta),
            None => saver,
        })
    }

    /// Connects a pool built from explicit options.
    ///
    /// # Errors
    /// [`Error::Sqlx`](crate::Error::Sqlx) when the server cannot be reached.
    pub async fn connect_with(connect: MySqlConnectOptions, pool: MySqlPoolOptions) -> Result<Self> {
        Ok(Self::from_pool(pool.connect_with(connect).await?))
    }

    /// Uses an existing pool (e.g. the application's own).
    pub fn from_pool(pool: MySqlPool) -> Self {
        let writers = WriterOptions::default().writers(&pool);
        Self { layer: ReadCache::new(Uncached::new(pool, writers)) }
    }

    /// How many connections this saver keeps open for its put transactions (default 10; 0 keeps
    /// none), beside the pool's.
    ///
    /// sqlx pings every connection given back to the pool (a round trip for the server and the
    /// client after every put), and the next put gets whichever connection is free. A kept
    /// connection goes back to the saver without a ping, and the next put takes it warm; one idle
    /// for `ping-after-idle` is pinged first, as a pooled one is. Kept connections are opened
    /// through the pool (its options and hooks) on first need, do not count against its
    /// `max-connections`, and are closed when the saver and its clones are dropped. When all of
    /// them are busy, a put waits for one (at most the pool's `acquire-timeout`), so they bound
    /// how many puts run at once; a put on a pooled connection would cost a `BEGIN`, a round
    /// trip for its parent check and sqlx's ping. With 0, every put runs on a pooled connection.
    #[must_use]
    pub fn with_write_connections(self, count: usize) -> Self {
        self.with_writers(&WriterOptions { count, ..WriterOptions::default() })
    }

    /// The saver with its kept write connections made anew from `options`.
    fn with_writers(mut self, options: &WriterOptions) -> Self {
        let uncached = self.layer.saver_mut();
        uncached.writers = options.writers(&uncached.pool);
        self
    }

    /// The saver under the read cache.
    fn uncached(&self) -> &Uncached {
        self.layer.saver()
    }

    /// How many threads' last stored checkpoints are kept in memory (default 1024; 0 keeps none).
    ///
    /// Reading the latest checkpoint of such a thread (as every run does first) then asks the
    /// server only which checkpoint is the latest and for its pending writes: when that is the
    /// one this saver stored, its document and channel values are not sent and decoded again.
    /// When another process has written, pruned or deleted the thread since, the server names
    /// another checkpoint and the read is the full one, so nothing newer is ever hidden.
    ///
    /// A turn with new input does not even ask (see
    /// [`Checkpointer::remembered_latest`](mnemograph_checkpoint::checkpoint::Checkpointer::remembered_latest)):
    /// once a row read back has shown that the server keeps the texts this saver stores
    /// (MariaDB; MySQL 8 renders JSON its own way, and there every turn reads), the run starts
    /// from the remembered checkpoint, and the parent check of its first transaction also
    /// compares that row's texts. A newer checkpoint, or a row rewritten in place, is refused
    /// there, and the run reads the thread and starts again.
    #[must_use]
    pub fn with_read_cache(self, threads: usize) -> Self {
        Self { layer: ReadCache::with_capacity(self.layer.into_saver(), threads) }
    }

    /// Stores these channels as deltas (opt-in, Rust-only), a full snapshot every
    /// [`DeltaChannels::DEFAULT_SNAPSHOT_EVERY`] versions: a new value that extends the stored
    /// one is saved as just the appended items. Reads return exactly what plain mode returns.
    /// LangGraph's Python savers cannot read such checkpoints; see [`DeltaChannels`].
    ///
    /// # Example
    /// ```no_run
    /// # async fn demo() -> Result<(), mnemograph_checkpoint_mysql::Error> {
    /// use mnemograph_checkpoint_mysql::MySqlCheckpointer;
    ///
    /// let saver = MySqlCheckpointer::connect("mysql://root@127.0.0.1:3306/app")
    ///     .await?
    ///     .with_delta_channels(["messages"]);
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_delta_channels<I, S>(self, channels: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.with_delta(DeltaChannels::new(channels))
    }

    /// Stores channels as deltas with explicit settings; see [`DeltaChannels`]. Replaces earlier
    /// settings and starts with an empty cache (clones made before keep theirs).
    #[must_use]
    pub fn with_delta(mut self, delta: DeltaChannels) -> Self {
        self.layer.saver_mut().delta = Some(Arc::new(DeltaState::new(delta)));
        self
    }

    /// A clone of this saver (same pool, connections and caches) whose every `put`, `commit` and
    /// `put_writes` first checks `fence` inside its own transaction, and is refused with
    /// [`CheckpointError::Fenced`](mnemograph_checkpoint::checkpoint::CheckpointError::Fenced), storing
    /// nothing, when the fence does not hold. With a locking fence query, the fenced rows cannot
    /// change between the check and the `COMMIT`: this is how a writer that can lose its claim to
    /// another (a run taken over by another worker) is kept from storing over the new owner.
    ///
    /// Deleting, copying and pruning threads are not fenced.
    ///
    /// # Example
    /// ```no_run
    /// # async fn demo() -> Result<(), mnemograph_checkpoint_mysql::Error> {
    /// use mnemograph_checkpoint_mysql::{Fence, MySqlCheckpointer};
    ///
    /// let saver = MySqlCheckpointer::connect("mysql://root@127.0.0.1:3306/app").await?;
    /// let claimed = saver.fenced(
    ///     Fence::new("SELECT COUNT(*) FROM claims WHERE thread = ? AND holder = ? LOCK IN SHARE MODE")
    ///         .bind("thread-7")
    ///         .bind("worker-a"),
    /// );
    /// # let _ = claimed;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn fenced(&self, fence: Fence) -> Self {
        let mut fenced = self.clone();
        fenced.layer.saver_mut().fence = Some(Arc::new(fence));
        fenced
    }

    /// The delta settings, `None` in plain mode.
    pub fn delta(&self) -> Option<&DeltaChannels> {
        self.uncached().delta.as_ref().map(|d| &d.config)
    }

    /// The connection pool.
    pub fn pool(&self) -> &MySqlPool {
        &self.uncached().pool
    }

    /// Creates or upgrades the tables: LangGraph's 22 migrations, recorded in
    /// `checkpoint_migrations`. Returns how many were applied (0 when the schema is current).
    ///
    /// Safe to call from several processes at once: they serialize on a `GET_LOCK` named after
    /// the database and wait up to two minutes for each other. The Python saver's `setup()` takes
    /// no such lock, so do not run both at the same moment on a fresh database.
    ///
    /// MySQL DDL is not transactional: each migration commits on its own. If `setup` fails or
    /// the process dies half-way, the migrations done so far stay, and the next `setup` carries on
    /// from the first one not recorded (one that was applied but not recorded is detected and
    /// recorded).
    ///
    /// # Errors
    /// [`Error::SetupLock`](crate::Error::SetupLock) when another `setup` holds the lock too
    /// long, [`Error::Schema`](crate::Error::Schema) when the database holds the shallow saver's
    /// tables (nothing is changed then), [`Error::Migrate`](crate::Error::Migrate) when the server
    /// rejects a migration (e.g. missing `ALTER` privilege), [`Error::Sqlx`](crate::Error::Sqlx)
    /// otherwise.
    pub async fn setup(&self) -> Result<usize> {
        migrate::run(self.pool(), migrate::Layout::Full).await
    }

    /// Keeps the `keep_last` newest checkpoints of each namespace of `thread_id` and removes the
    /// older ones, their pending writes, and every blob no remaining checkpoint refers to. Returns
    /// how many checkpoints were removed. All of it is one transaction.
    ///
    /// The oldest kept checkpoint keeps its `parent_config`, which then names a checkpoint that no
    /// longer exists. Pending writes of kept checkpoints stay, so an interrupted run can resume.
    /// Blobs that the delta chains of kept checkpoints are built on stay too.
    ///
    /// # Errors
    /// [`Error::Sqlx`](crate::Error::Sqlx) when a statement fails (nothing is removed then).
    pub async fn prune(&self, thread_id: &str, keep_last: usize) -> Result<u64> {
        let mut tx = self.pool().begin().await?;
        let removed = retention::keep_last(&mut tx, thread_id, keep_last).await?;
        tx.commit().await?;
        if let Some(delta) = &self.uncached().delta {
            // A cached base may be gone; a delta on it would fall back to a snapshot anyway.
            delta.forget_thread(thread_id);
        }
        self.layer.forget_thread(thread_id);
        Ok(removed)
    }
}

/// A saver through its read cache: every `Checkpointer` call goes to the layer.
impl Delegate for MySqlCheckpointer {
    fn saver(&self) -> &dyn DynCheckpointer {
        &self.layer
    }
}
