//! Reading the keys of `mnemograph-checkpoint-redis` through [`RedisCheckpointer`]: its saver
//! API, and its read-only view of what it stored (`stored_threads`, `stored_checkpoints`) for
//! finding threads and for reading a thread whose stored values the saver refuses to decode.
//!
//! Nothing here writes: the saver is built without `refresh_on_read`, so reads leave every
//! thread's expiry alone.

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::backend::redact;
use mnemograph_checkpoint_redis::{RedisCheckpointer, StoredValue, DEFAULT_PREFIX};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde_json::Value as Json;

use super::thread::ThreadInfo;
use crate::decode::Decoded;
use crate::error::{BoxError, Error, Result};
use crate::snapshot::{RawCheckpoint, Snapshot};

/// The URL parameter naming the saver's key prefix; removed before the URL reaches the driver.
const PREFIX_PARAM: &str = "key-prefix";

/// A Redis server holding `mnemograph-checkpoint-redis` threads.
#[derive(Debug, Clone)]
pub struct RedisSource {
    /// The saver, read-only use.
    pub(super) saver: RedisCheckpointer,
    /// The URL without its password, for messages.
    url: String,
}

impl RedisSource {
    /// Connects; `?key-prefix=P` selects a saver configured with another prefix.
    ///
    /// # Errors
    /// [`Error::InvalidUrl`] or [`Error::Unreachable`].
    pub async fn connect(url: &str) -> Result<Self> {
        let shown = redact(url);
        let (url, prefix) = split_prefix(url);
        let client = redis::Client::open(url.as_str())
            .map_err(|e| Error::InvalidUrl { url: shown.clone(), source: e.into() })?;
        let config = ConnectionManagerConfig::new()
            .set_number_of_retries(1)
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(Duration::from_secs(60)));
        let conn = ConnectionManager::new_with_config(client, config)
            .await
            .map_err(|e| Error::Unreachable { url: shown.clone(), source: e.into() })?;
        let saver = RedisCheckpointer::builder()
            .key_prefix(prefix)
            .refresh_on_read(false)
            .with_connection_manager(conn)
            .map_err(|e| Error::InvalidUrl { url: shown.clone(), source: e.into() })?;
        Ok(Self { saver, url: shown })
    }

    pub(super) fn backend(&self, source: impl Into<BoxError>) -> Error {
        Error::Backend { url: self.url.clone(), source: source.into() }
    }

    /// See [`Source::threads`](super::Source::threads).
    pub(crate) async fn threads(&self, limit: usize) -> Result<Vec<ThreadInfo>> {
        let threads = self.saver.stored_threads(limit).await.map_err(|e| self.backend(e))?;
        Ok(threads
            .into_iter()
            .map(|t| {
                let record = t.latest_record.as_ref();
                ThreadInfo {
                    latest_step: record.and_then(|r| r.metadata.get("step")).and_then(Json::as_i64),
                    latest_ts: record
                        .and_then(|r| r.checkpoint.get("ts"))
                        .and_then(Json::as_str)
                        .map(str::to_owned),
                    thread_id: t.thread_id,
                    checkpoints: t.checkpoints,
                    namespaces: t.namespaces,
                    latest_id: t.latest_id,
                }
            })
            .collect())
    }

    /// A thread's checkpoints as stored, every value decoded on its own.
    pub(super) async fn raw(
        &self,
        thread_id: &str,
        ns: &str,
        only: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<Snapshot>> {
        let stored =
            self.saver.stored_checkpoints(thread_id, ns, only, limit).await.map_err(|e| self.backend(e))?;
        Ok(stored
            .into_iter()
            .map(|c| {
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
                    .map(|w| {
                        (w.task_id, w.idx, w.channel.unwrap_or_else(|| "?".to_owned()), decoded(&w.value))
                    })
                    .collect();
                Snapshot::from_raw(raw)
            })
            .collect())
    }
}

/// A stored value decoded for display.
fn decoded(value: &StoredValue) -> Decoded {
    match value {
        StoredValue::Typed { kind, payload } => Decoded::from_typed(kind, payload),
        StoredValue::Unreadable { reason, bytes } => Decoded::undecodable("?", reason, bytes),
    }
}

/// The URL without the `key-prefix` parameter, and the prefix, percent-decoded (default
/// [`DEFAULT_PREFIX`]). A URL that does not parse is returned whole, for the driver to report.
fn split_prefix(url: &str) -> (String, String) {
    let mut prefix = DEFAULT_PREFIX.to_owned();
    let Ok(mut parsed) = url::Url::parse(url) else { return (url.to_owned(), prefix) };
    if parsed.query().is_none() {
        return (url.to_owned(), prefix);
    }
    let mut kept = Vec::new();
    for (key, value) in parsed.query_pairs() {
        match key == PREFIX_PARAM {
            true => prefix = value.into_owned(),
            false => kept.push((key.into_owned(), value.into_owned())),
        }
    }
    match kept.is_empty() {
        true => parsed.set_query(None),
        false => {
            parsed.query_pairs_mut().clear().extend_pairs(kept);
        }
    }
    (parsed.into(), prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_parameter_is_taken_out_of_the_url() {
        assert_eq!(split_prefix("redis://h:6379/0"), ("redis://h:6379/0".into(), DEFAULT_PREFIX.into()));
        assert_eq!(split_prefix("redis://h/0?key-prefix=app:cp"), ("redis://h/0".into(), "app:cp".into()));
        assert_eq!(
            split_prefix("rediss://h/?protocol=resp3&key-prefix=p"),
            ("rediss://h/?protocol=resp3".into(), "p".into())
        );
        assert_eq!(
            split_prefix("redis://:p%40ss@h/0?key-prefix=a%3Ab"),
            ("redis://:p%40ss@h/0".into(), "a:b".into())
        );
        assert_eq!(split_prefix("redis://h:port/"), ("redis://h:port/".into(), DEFAULT_PREFIX.into()));
    }
}
