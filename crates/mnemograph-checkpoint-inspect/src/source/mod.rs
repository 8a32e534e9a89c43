//! Where checkpoints are read from: a MySQL database of `mnemograph-checkpoint-mysql` or a
//! PostgreSQL database of `mnemograph-checkpoint-postgres` (LangGraph's tables, either), or a
//! Redis server of `mnemograph-checkpoint-redis`, chosen by the URL scheme.
//!
//! Both read through the savers' public [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer)
//! API. When a saver refuses to read a thread because something stored is corrupt (a blob that is
//! not msgpack, an unknown serializer type), the source reads the raw records instead and
//! decodes each value on its own, so the damage shows up next to the rest of the thread.

mod mysql;
mod postgres;
mod redis;
mod sql;
mod thread;

use mnemograph_checkpoint::checkpoint::backend::redact;
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, DynCheckpointer, ListOptions};

use crate::error::{Error, Result};
use crate::snapshot::Snapshot;

pub use self::mysql::MySqlSource;
pub use self::postgres::PostgresSource;
pub use self::redis::RedisSource;
pub use self::thread::ThreadInfo;

/// A connected store.
#[derive(Debug)]
#[non_exhaustive]
pub enum Source {
    /// `mysql://`
    MySql(MySqlSource),
    /// `redis://` or `rediss://`
    Redis(RedisSource),
    /// `postgres://` or `postgresql://`
    Postgres(PostgresSource),
}

impl Source {
    /// Connects to the store the URL names.
    ///
    /// # Errors
    /// [`Error::UnsupportedScheme`] for another scheme, [`Error::InvalidUrl`] for a URL the driver
    /// cannot parse, [`Error::Unreachable`] when the server does not answer.
    pub async fn connect(url: &str) -> Result<Self> {
        let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            Some("mysql" | "mariadb") => Ok(Self::MySql(MySqlSource::connect(url).await?)),
            Some("redis" | "rediss") => Ok(Self::Redis(RedisSource::connect(url).await?)),
            Some("postgres" | "postgresql") => Ok(Self::Postgres(PostgresSource::connect(url).await?)),
            _ => Err(Error::UnsupportedScheme { url: redact(url) }),
        }
    }

    /// Up to `limit` threads, the most recently active first.
    ///
    /// # Errors
    /// [`Error::Backend`] when the query fails.
    pub async fn threads(&self, limit: usize) -> Result<Vec<ThreadInfo>> {
        match self {
            Self::MySql(s) => s.threads(limit).await,
            Self::Redis(s) => s.threads(limit).await,
            Self::Postgres(s) => s.threads(limit).await,
        }
    }

    /// The checkpoints of a thread's namespace, newest first, at most `limit`.
    ///
    /// # Errors
    /// [`Error::Backend`] when the query fails. An unknown thread is an empty list.
    pub async fn history(&self, thread_id: &str, ns: &str, limit: Option<usize>) -> Result<Vec<Snapshot>> {
        let config = CheckpointConfig::thread(thread_id).with_ns(ns);
        let options = limit.map_or_else(ListOptions::new, |l| ListOptions::new().limit(l));
        match self.saver().list(Some(&config), options).await {
            Ok(tuples) => Ok(tuples.iter().map(Snapshot::from_tuple).collect()),
            Err(e) if is_bad_data(&e) => self.raw(thread_id, ns, None, limit).await,
            Err(e) => Err(self.backend(e)),
        }
    }

    /// One checkpoint: the one with `checkpoint_id`, or the latest; `None` when there is none.
    ///
    /// # Errors
    /// [`Error::Backend`] when the query fails.
    pub async fn checkpoint(
        &self,
        thread_id: &str,
        ns: &str,
        checkpoint_id: Option<&str>,
    ) -> Result<Option<Snapshot>> {
        let mut config = CheckpointConfig::thread(thread_id).with_ns(ns);
        config.checkpoint_id = checkpoint_id.map(str::to_owned);
        match self.saver().get_tuple(&config).await {
            Ok(tuple) => Ok(tuple.as_ref().map(Snapshot::from_tuple)),
            Err(e) if is_bad_data(&e) => {
                Ok(self.raw(thread_id, ns, checkpoint_id, Some(1)).await?.into_iter().next())
            }
            Err(e) => Err(self.backend(e)),
        }
    }

    /// The saver the normal path reads through.
    fn saver(&self) -> &dyn DynCheckpointer {
        match self {
            Self::MySql(s) => &s.saver,
            Self::Redis(s) => &s.saver,
            Self::Postgres(s) => &s.saver,
        }
    }

    /// The backend's own record reader, for threads the saver refuses to decode.
    async fn raw(
        &self,
        thread_id: &str,
        ns: &str,
        only: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<Snapshot>> {
        match self {
            Self::MySql(s) => s.raw(thread_id, ns, only, limit).await,
            Self::Redis(s) => s.raw(thread_id, ns, only, limit).await,
            Self::Postgres(s) => s.raw(thread_id, ns, only, limit).await,
        }
    }

    /// A saver failure as this source's error (the URL, password hidden, attached).
    fn backend(&self, source: CheckpointError) -> Error {
        match self {
            Self::MySql(s) => s.backend(source),
            Self::Redis(s) => s.backend(source),
            Self::Postgres(s) => s.backend(source),
        }
    }

    /// A checkpoint by id or by a unique prefix of its id.
    ///
    /// # Errors
    /// [`Error::UnknownThread`], [`Error::UnknownCheckpoint`], [`Error::AmbiguousCheckpoint`],
    /// [`Error::Backend`].
    pub async fn resolve(&self, thread_id: &str, ns: &str, checkpoint_id: Option<&str>) -> Result<Snapshot> {
        if let Some(found) = self.checkpoint(thread_id, ns, checkpoint_id).await? {
            return Ok(found);
        }
        let unknown_thread =
            || Error::UnknownThread { thread_id: thread_id.to_owned(), checkpoint_ns: ns.to_owned() };
        let Some(prefix) = checkpoint_id else { return Err(unknown_thread()) };
        let all = self.history(thread_id, ns, None).await?;
        if all.is_empty() {
            return Err(unknown_thread());
        }
        let mut matches: Vec<Snapshot> =
            all.into_iter().filter(|s| s.checkpoint_id.starts_with(prefix)).collect();
        match matches.len() {
            1 => Ok(matches.remove(0)),
            0 => Err(Error::UnknownCheckpoint {
                thread_id: thread_id.to_owned(),
                checkpoint_id: prefix.to_owned(),
            }),
            count => Err(Error::AmbiguousCheckpoint {
                thread_id: thread_id.to_owned(),
                prefix: prefix.to_owned(),
                count,
            }),
        }
    }
}

/// Whether a saver failed because of what is stored (so the raw path can still show it), rather
/// than because of the connection.
fn is_bad_data(err: &CheckpointError) -> bool {
    matches!(err, CheckpointError::Corrupt(_) | CheckpointError::Decode { .. })
}
