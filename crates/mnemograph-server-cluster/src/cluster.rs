//! [`Cluster`]: how to reach the stores a cluster shares, and what this process contributes to it.

use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_server::__cluster::{Keepers, Setup};
use mnemograph_server::{Backend, Result};

use crate::events;
use crate::queue::{Lease, MySqlRunQueue};
use crate::{ClusterAssistants, ClusterCrons, ClusterRecords, Ledger};

/// How to reach the stores a cluster shares, and what this process contributes to it.
///
/// ```no_run
/// # async fn run() -> mnemograph_server::Result<()> {
/// use mnemograph_server_cluster::Cluster;
/// let cluster = Cluster::connect("mysql://root@127.0.0.1:3306/app", "redis://127.0.0.1:6379/")
///     .await?
///     .with_workers(32);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Cluster {
    queue: MySqlRunQueue,
    events: events::Events,
    pub(crate) workers: usize,
    pub(crate) lease: Lease,
    pub(crate) name: String,
    /// The saver whose writes are fenced in their own transaction, when given.
    pub(crate) saver: Option<MySqlCheckpointer>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("name", &self.name)
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

/// How many runs a process runs at once, by default.
pub const WORKERS: usize = 64;

/// About how many events a run's stream keeps, by default: a client resuming from an event
/// older than those gets the ones kept, from the oldest.
pub const STREAM_MAX_LEN: usize = 10_000;

impl Cluster {
    /// Connects to the MySQL/MariaDB database of `mysql_url` (creating the tables when missing)
    /// and to the Redis server of `redis_url`.
    ///
    /// # Errors
    /// [`ServerError::Queue`](mnemograph_server::ServerError::Queue) when either cannot be reached.
    pub async fn connect(mysql_url: &str, redis_url: &str) -> Result<Self> {
        let queue = MySqlRunQueue::connect(mysql_url).await?;
        queue.setup().await?;
        Self::with_queue(queue, redis_url).await
    }

    /// A cluster on an existing queue (its tables set up) and the Redis server of `redis_url`.
    ///
    /// # Errors
    /// [`ServerError::Queue`](mnemograph_server::ServerError::Queue) when Redis cannot be reached.
    pub async fn with_queue(queue: MySqlRunQueue, redis_url: &str) -> Result<Self> {
        let events =
            events::Events::connect(redis_url, "mnemograph:".to_owned(), mnemograph_server::EVENT_RETENTION)
                .await?;
        Ok(Self {
            queue,
            events,
            workers: WORKERS,
            lease: Lease::default(),
            name: format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple()),
            saver: None,
        })
    }

    /// Runs at most `workers` runs at once in this process; 0 makes a process that only answers
    /// requests and leaves the runs to the others.
    #[must_use]
    pub fn with_workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }

    /// Claims runs under `lease` (30 s by default): a run whose process stops renewing is taken
    /// over this long after its last renewal.
    #[must_use]
    pub fn with_lease(mut self, lease: Lease) -> Self {
        self.lease = lease;
        self
    }

    /// Checkpoints the cluster's threads in `saver`, a saver on the MySQL/MariaDB server of the
    /// cluster's database, and makes it the server's saver (in place of the one given to
    /// [`Server::new`](mnemograph_server::Server::new)) when the cluster is given to
    /// [`Server::with_backend`](mnemograph_server::Server::with_backend).
    ///
    /// A run's checkpoint and pending-write writes then check, inside their own transaction and
    /// with a lock on the run's row, that this process still holds the run under its claim: a
    /// worker that lost a run to another (its lease ran out) cannot store over the new owner's
    /// checkpoints, even with a write that was already under way, and a takeover waits for a
    /// write in flight. Without it, each write is checked just before it is made, with a margin
    /// of lease left, and the saver's parent check catches what slips past (see the crate's
    /// documentation).
    ///
    /// ```no_run
    /// # async fn run() -> mnemograph_server::Result<()> {
    /// use mnemograph_checkpoint_mysql::MySqlCheckpointer;
    /// use mnemograph_server_cluster::Cluster;
    ///
    /// let url = "mysql://root@127.0.0.1:3306/app";
    /// let saver = MySqlCheckpointer::connect(url).await.expect("MySQL");
    /// saver.setup().await.expect("the saver's tables");
    /// let cluster = Cluster::connect(url, "redis://127.0.0.1:6379/").await?.with_saver(saver);
    /// # let _ = cluster;
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_saver(mut self, saver: MySqlCheckpointer) -> Self {
        self.saver = Some(saver);
        self
    }

    /// Names this process's workers in the queue (a unique name by default).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Keeps about the latest `max_len` events of each run's stream ([`STREAM_MAX_LEN`] by
    /// default), while the run goes on and after it ended. Redis trims whole blocks of entries
    /// (`XADD MAXLEN ~`), so a stream may hold somewhat more. A client that resumes with a
    /// `Last-Event-ID` older than the oldest event kept gets the events still kept, from the
    /// oldest on, and misses those trimmed away, as with LangGraph's server.
    #[must_use]
    pub fn with_stream_max_len(mut self, max_len: usize) -> Self {
        self.events.set_max_len(max_len);
        self
    }

    /// Starts the names of its Redis keys and channels with `prefix` (`mnemograph:` by default),
    /// so that several clusters may share one Redis.
    #[must_use]
    pub fn with_key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.events.set_prefix(prefix.into());
        self
    }

    /// The shared records as this process's routes and workers use them, keeping a finished
    /// run's events for `retention`.
    pub(crate) fn ledger(&self, retention: Duration) -> Arc<Ledger> {
        let mut events = self.events.clone();
        events.set_retention(retention);
        Arc::new(Ledger::new(self.queue.clone(), events))
    }
}

impl Backend for Cluster {
    fn saver(&self) -> Option<Arc<dyn DynCheckpointer>> {
        self.saver.clone().map(|saver| Arc::new(saver) as Arc<dyn DynCheckpointer>)
    }

    fn keepers(self: Box<Self>, setup: Setup) -> Keepers {
        let ledger = self.ledger(setup.event_retention);
        let pool = ledger.pool().clone();
        let records = ClusterRecords::new(ledger.clone(), setup.saver, setup.retention);
        let cluster = *self;
        Keepers {
            records: Arc::new(records),
            assistants: Arc::new(ClusterAssistants::new(pool.clone(), setup.system)),
            crons: Arc::new(ClusterCrons::new(pool)),
            start: Some(Box::new(move |app| crate::worker::start(&cluster, ledger, app))),
        }
    }
}
