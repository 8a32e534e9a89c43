//! Where checkpoints are read from: a MySQL database of `mnemograph-checkpoint-mysql` or a
//! PostgreSQL database of `mnemograph-checkpoint-postgres` (LangGraph's tables, either), a SQLite
//! file of `mnemograph-checkpoint-sqlite` (LangGraph's SQLite saver's tables, opened read-only),
//! or a Redis server of `mnemograph-checkpoint-redis`, chosen by the URL scheme.
//!
//! Every saver is read alike, through its public API: the
//! [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) reads, and its
//! [`StoredView`] for the list of threads and for a thread the saver refuses to read because
//! something stored is corrupt (a blob that is not msgpack, an unknown serializer type); then
//! each value is decoded on its own, so the damage shows up next to the rest of the thread.
//! Connecting is all that differs by scheme: adding a saver is one `connect` here.

mod mysql;
mod postgres;
mod redis;
mod sql;
mod sqlite;
mod thread;

use mnemograph_checkpoint::checkpoint::backend::redact;
use mnemograph_checkpoint::checkpoint::stored::{StoredCheckpoint, StoredThread, StoredValue, StoredView};
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, DynCheckpointer, ListOptions};
use serde_json::Value as Json;

use crate::decode::Decoded;
use crate::error::{Error, Result};
use crate::snapshot::{RawCheckpoint, Snapshot};

pub use self::thread::ThreadInfo;

/// A connected saver.
pub struct Source {
    /// The saver, used read-only.
    saver: Box<dyn StoredView>,
    /// The URL without its password, for messages.
    url: String,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source").field("url", &self.url).finish_non_exhaustive()
    }
}

impl Source {
    /// Connects to the store the URL names.
    ///
    /// # Errors
    /// [`Error::UnsupportedScheme`] for another scheme, [`Error::InvalidUrl`] for a URL the driver
    /// cannot parse, [`Error::Unreachable`] when the server does not answer; for SQLite,
    /// [`Error::MissingFile`], [`Error::NotSqlite`] or [`Error::NoCheckpointTables`] when the file
    /// is not a saver's.
    pub async fn connect(url: &str) -> Result<Self> {
        let shown = redact(url);
        let saver: Box<dyn StoredView> = match scheme(url).as_deref() {
            Some("mysql" | "mariadb") => Box::new(mysql::connect(url, &shown).await?),
            Some("redis" | "rediss") => Box::new(redis::connect(url, &shown).await?),
            Some("postgres" | "postgresql") => Box::new(postgres::connect(url, &shown).await?),
            Some("sqlite") => Box::new(sqlite::connect(url, &shown).await?),
            _ => return Err(Error::UnsupportedScheme { url: shown }),
        };
        Ok(Self { saver, url: shown })
    }

    /// Up to `limit` threads, the most recently active first.
    ///
    /// # Errors
    /// [`Error::Backend`] when the query fails.
    pub async fn threads(&self, limit: usize) -> Result<Vec<ThreadInfo>> {
        let threads = self.saver.stored_threads(limit).await.map_err(|e| self.view_failed(e))?;
        Ok(threads.into_iter().map(thread_info).collect())
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
        &*self.saver
    }

    /// The checkpoints as stored, for threads the saver refuses to decode; every value decoded
    /// on its own.
    async fn raw(
        &self,
        thread_id: &str,
        ns: &str,
        only: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<Snapshot>> {
        let stored = self
            .saver
            .stored_checkpoints(thread_id, ns, only, limit)
            .await
            .map_err(|e| self.view_failed(e))?;
        Ok(stored.into_iter().map(|c| snapshot(thread_id, c)).collect())
    }

    /// A saver failure as this source's error (the URL, password hidden, attached).
    fn backend(&self, source: CheckpointError) -> Error {
        Error::Backend { url: self.url.clone(), source: source.into() }
    }

    /// A [`StoredView`] failure as this source's error: the driver's error as its source, without
    /// the trait's wrapper, since the view only reads.
    fn view_failed(&self, source: CheckpointError) -> Error {
        let source = match source {
            CheckpointError::Backend(driver) => driver,
            other => other.into(),
        };
        Error::Backend { url: self.url.clone(), source }
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

/// The URL's scheme in lowercase: what comes before `://`, or `sqlite` for SQLite's `sqlite:PATH`
/// form, which has no `//`.
fn scheme(url: &str) -> Option<String> {
    match url.split_once("://") {
        Some((scheme, _)) => Some(scheme.to_ascii_lowercase()),
        None => url.get(..7).filter(|s| s.eq_ignore_ascii_case("sqlite:")).map(|_| "sqlite".to_owned()),
    }
}

/// What `threads` lists of a stored thread: its latest step and time from the latest record.
fn thread_info(t: StoredThread) -> ThreadInfo {
    let record = t.latest_record.as_ref();
    ThreadInfo {
        latest_step: record.and_then(|r| r.metadata.get("step")).and_then(Json::as_i64),
        latest_ts: record.and_then(|r| r.checkpoint.get("ts")).and_then(Json::as_str).map(str::to_owned),
        thread_id: t.thread_id,
        checkpoints: t.checkpoints,
        namespaces: t.namespaces,
        latest_id: t.latest_id,
    }
}

/// A checkpoint as stored, every value decoded on its own.
fn snapshot(thread_id: &str, c: StoredCheckpoint) -> Snapshot {
    let mut raw = RawCheckpoint {
        thread_id: thread_id.to_owned(),
        checkpoint_ns: c.checkpoint_ns,
        checkpoint_id: c.checkpoint_id,
        ..RawCheckpoint::default()
    };
    match c.record {
        Ok(record) => {
            raw.document = record.checkpoint;
            raw.metadata = record.metadata;
            raw.parent_id = record.parent_checkpoint_id;
        }
        Err(problem) => raw.problems.push(problem),
    }
    raw.blobs = c.blobs.into_iter().map(|(channel, v)| (channel, decoded(&v))).collect();
    raw.writes = c
        .writes
        .into_iter()
        .map(|w| (w.task_id, w.idx, w.channel.unwrap_or_else(|| "?".to_owned()), decoded(&w.value)))
        .collect();
    Snapshot::from_raw(raw)
}

/// A stored value decoded for display.
fn decoded(value: &StoredValue) -> Decoded {
    match value {
        StoredValue::Typed { kind, payload } => Decoded::from_typed(kind, payload),
        StoredValue::Unreadable { reason, bytes } => Decoded::undecodable("?", reason, bytes),
    }
}

/// Whether a saver failed because of what is stored (so the raw path can still show it), rather
/// than because of the connection.
fn is_bad_data(err: &CheckpointError) -> bool {
    matches!(err, CheckpointError::Corrupt(_) | CheckpointError::Decode { .. })
}
