//! [`RedisCheckpointerBuilder`]: the settings of a [`RedisCheckpointer`] and connecting.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;

use crate::checkpointer::RedisCheckpointer;
use crate::conn::Conn;
use crate::error::{RedisSaverError, Result};
use crate::replicas::ReplicaWait;
use crate::uncached::Uncached;

/// The expiry a thread gets when none is configured: a conversation's running snapshot lives a
/// week, long enough to pick the conversation up again, short enough that idle threads free
/// their memory.
pub const DEFAULT_TTL: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// How long a command may wait for its reply when none is configured. The `redis` crate's own
/// default is too short for a saver: one multiplexed connection carries every thread's commands, a
/// put script moves a whole checkpoint, and under load the queue alone can take longer. A reply
/// that times out does not mean the command did not run.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

/// The key prefix used when none is configured.
pub const DEFAULT_PREFIX: &str = "graph:cp";

/// Settings of a [`RedisCheckpointer`], collected by [`RedisCheckpointer::builder`].
#[derive(Debug, Clone)]
pub struct RedisCheckpointerBuilder {
    /// Prepended to every key.
    prefix: String,
    /// Expiry of a thread after its last write; `None` keeps threads forever.
    ttl: Option<Duration>,
    /// Whether reads push the expiry back too.
    refresh_on_read: bool,
    /// Keep only the latest checkpoint of each (thread, namespace).
    shallow: bool,
    /// How long `connect` and `connect_cluster` let a command wait for its reply.
    response_timeout: Option<Duration>,
    /// How many threads' last stored checkpoints are remembered.
    read_cache: usize,
    /// Replicas each write waits for, and for how long.
    replicas: Option<(usize, Duration)>,
}

impl Default for RedisCheckpointerBuilder {
    fn default() -> Self {
        Self {
            prefix: DEFAULT_PREFIX.to_owned(),
            ttl: Some(DEFAULT_TTL),
            refresh_on_read: false,
            shallow: false,
            response_timeout: Some(DEFAULT_RESPONSE_TIMEOUT),
            read_cache: mnemograph_checkpoint::checkpoint::backend::DEFAULT_RECENT_CAPACITY,
            replicas: None,
        }
    }
}

// The entry points live beside the builder they hand out, so the saver itself needs no
// knowledge of its settings type.
impl RedisCheckpointer {
    /// Settings to connect with; the defaults are a 7-day TTL, no refresh on read, full history.
    pub fn builder() -> RedisCheckpointerBuilder {
        RedisCheckpointerBuilder::default()
    }

    /// Connects to one server with the default settings.
    ///
    /// # Errors
    /// See [`RedisCheckpointerBuilder::connect`].
    pub async fn connect(url: &str) -> Result<Self> {
        Self::builder().connect(url).await
    }
}

impl RedisCheckpointerBuilder {
    /// Prepends `prefix` to every key (default [`DEFAULT_PREFIX`]); several savers can share a
    /// server under different prefixes. It may not contain `{` or `}`, which would change the
    /// cluster hash tag.
    #[must_use]
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Every key of a thread expires `ttl` after the thread's last write (default
    /// [`DEFAULT_TTL`]). Rounded down to whole milliseconds.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Threads never expire. A write through such a saver also clears an expiry that another
    /// saver set, so a thread's keys never disagree.
    #[must_use]
    pub fn no_ttl(mut self) -> Self {
        self.ttl = None;
        self
    }

    /// Reads (`get_tuple`, `list`) push a thread's expiry back like writes do.
    #[must_use]
    pub fn refresh_on_read(mut self, refresh: bool) -> Self {
        self.refresh_on_read = refresh;
        self
    }

    /// How many threads' last stored checkpoints are kept in memory (default 1024; 0 keeps none).
    ///
    /// Reading the latest checkpoint of such a thread (as every run does first) then asks the
    /// server only whether that checkpoint is still the newest and unchanged, and for its pending
    /// writes: when it is, its channel values are not sent and decoded again. When another
    /// process has written, pruned or deleted the thread since, the script says so and the read
    /// is the full one, so nothing newer is ever hidden.
    #[must_use]
    pub fn read_cache(mut self, threads: usize) -> Self {
        self.read_cache = threads;
        self
    }

    /// Keeps only the newest checkpoint of each (thread, namespace): each `put` removes the
    /// namespace's older checkpoints, the values only they used and their pending writes. The
    /// "running snapshot" use, where history lives elsewhere.
    #[must_use]
    pub fn shallow(mut self, shallow: bool) -> Self {
        self.shallow = shallow;
        self
    }

    /// How long a command of a connection made by [`connect`](Self::connect) or
    /// [`connect_cluster`](Self::connect_cluster) waits for its reply before it fails with a
    /// timeout (default [`DEFAULT_RESPONSE_TIMEOUT`]; `None`: no limit).
    #[must_use]
    pub fn response_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.response_timeout = timeout;
        self
    }

    /// Makes every checkpoint and pending-write write wait until `replicas` replicas have it
    /// (Redis's `WAIT`), for at most `timeout`. Without it (the default) a write is acknowledged
    /// as soon as the primary has it, and a failover in the next moments can lose it silently.
    /// With it, a write that fewer replicas acknowledged in time fails with
    /// [`RedisSaverError::NotReplicated`] (it is on the primary nonetheless).
    ///
    /// The wait runs on the saver's one multiplexed connection, so commands sent after it queue
    /// until the replicas answer: throughput falls to about one write per replication round trip.
    pub fn wait_for_replicas(mut self, replicas: usize, timeout: Duration) -> Self {
        self.replicas = Some((replicas, timeout));
        self
    }

    /// The connection manager settings [`connect`](Self::connect) uses, for building a
    /// [`ConnectionManager`] of your own to hand to
    /// [`with_connection_manager`](Self::with_connection_manager).
    pub fn connection_manager_config(&self) -> ConnectionManagerConfig {
        ConnectionManagerConfig::new().set_response_timeout(self.response_timeout)
    }

    /// Connects to one server, e.g. `redis://127.0.0.1:6379/0`, through a
    /// [`ConnectionManager`] that reconnects by itself.
    ///
    /// # Errors
    /// [`RedisSaverError::Invalid`] for a bad prefix, [`RedisSaverError::Redis`] when the URL is
    /// invalid or the server cannot be reached.
    pub async fn connect(self, url: &str) -> Result<RedisCheckpointer> {
        let config = self.connection_manager_config();
        let manager = redis::Client::open(url)?.get_connection_manager_with_config(config).await?;
        self.with_connection_manager(manager)
    }

    /// Connects to a Redis Cluster through any of its nodes.
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_cluster<S: AsRef<str>>(self, urls: &[S]) -> Result<RedisCheckpointer> {
        let urls: Vec<&str> = urls.iter().map(AsRef::as_ref).collect();
        let mut client = redis::cluster::ClusterClient::builder(urls);
        if let Some(timeout) = self.response_timeout {
            client = client.response_timeout(timeout);
        }
        let conn = client.build()?.get_async_connection().await?;
        self.with_cluster_connection(conn)
    }

    /// Uses an existing connection manager.
    ///
    /// # Errors
    /// [`RedisSaverError::Invalid`] for a bad prefix or TTL.
    pub fn with_connection_manager(self, manager: ConnectionManager) -> Result<RedisCheckpointer> {
        self.build(Conn::Single(manager))
    }

    /// Uses an existing cluster connection.
    ///
    /// # Errors
    /// [`RedisSaverError::Invalid`] for a bad prefix or TTL.
    pub fn with_cluster_connection(self, conn: ClusterConnection) -> Result<RedisCheckpointer> {
        self.build(Conn::Cluster(conn))
    }

    fn build(self, conn: Conn) -> Result<RedisCheckpointer> {
        if self.prefix.contains(['{', '}']) {
            return Err(RedisSaverError::Invalid(format!("key prefix `{}` contains a brace", self.prefix)));
        }
        let ttl_ms = match self.ttl {
            None => 0,
            Some(ttl) if ttl.as_millis() == 0 => {
                return Err(RedisSaverError::Invalid("ttl must be at least 1 ms (or use no_ttl)".to_owned()))
            }
            Some(ttl) => u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
        };
        let replicas = match self.replicas {
            None => None,
            Some((0, _)) => {
                return Err(RedisSaverError::Invalid("wait_for_replicas needs at least 1 replica".to_owned()))
            }
            Some((_, timeout)) if timeout.as_millis() == 0 => {
                return Err(RedisSaverError::Invalid("the replica timeout must be at least 1 ms".to_owned()))
            }
            Some((replicas, timeout)) => Some(ReplicaWait { replicas, timeout }),
        };
        let store = Uncached::new(conn, self.prefix, ttl_ms, self.refresh_on_read, self.shallow, replicas);
        Ok(RedisCheckpointer::new(store, self.read_cache))
    }
}
