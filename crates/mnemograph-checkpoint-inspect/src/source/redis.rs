//! Reading the keys of `mnemograph-checkpoint-redis` through [`RedisCheckpointer`], plus what it has no API
//! for: finding the threads (a `SCAN` for their index keys) and reading a thread whose stored
//! values the saver refuses to decode (the hashes read field by field, as laid out in
//! [`ThreadKeys`]' documentation).
//!
//! Nothing here writes: the saver is built without `refresh_on_read`, so reads leave every
//! thread's expiry alone.

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::serde::parse_json;
use mnemograph_checkpoint_mysql::redact;
use mnemograph_checkpoint_redis::{RedisCheckpointer, ThreadKeys, DEFAULT_PREFIX};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde_json::Value as Json;

use super::thread::ThreadInfo;
use crate::decode::Decoded;
use crate::error::{BoxError, Error, Result};
use crate::snapshot::{RawCheckpoint, Snapshot};

/// The URL parameter naming the saver's key prefix; removed before the URL reaches the driver.
const PREFIX_PARAM: &str = "key-prefix";

/// How many keys one `SCAN` call asks for.
const SCAN_COUNT: usize = 1000;

/// A Redis server holding `mnemograph-checkpoint-redis` threads.
#[derive(Debug, Clone)]
pub struct RedisSource {
    /// The saver, read-only use.
    pub(super) saver: RedisCheckpointer,
    /// A connection for the commands the saver has no API for.
    conn: ConnectionManager,
    /// The key prefix the saver was configured with.
    prefix: String,
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
            .key_prefix(prefix.clone())
            .refresh_on_read(false)
            .with_connection_manager(conn.clone())
            .map_err(|e| Error::InvalidUrl { url: shown.clone(), source: e.into() })?;
        Ok(Self { saver, conn, prefix, url: shown })
    }

    pub(super) fn backend(&self, source: impl Into<BoxError>) -> Error {
        Error::Backend { url: self.url.clone(), source: source.into() }
    }

    /// See [`Source::threads`](super::Source::threads).
    pub(crate) async fn threads(&self, limit: usize) -> Result<Vec<ThreadInfo>> {
        let (pattern, head, tail) = index_pattern(&self.prefix);
        let mut conn = self.conn.clone();
        let mut keys: Vec<String> = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(SCAN_COUNT)
                .arg("TYPE")
                .arg("zset")
                .query_async(&mut conn)
                .await
                .map_err(|e| self.backend(e))?;
            keys.extend(batch);
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
        // SCAN may return a key twice.
        keys.sort_unstable();
        keys.dedup();
        let mut threads = Vec::new();
        for key in keys {
            // Keys of a longer prefix can match the pattern; their tag is not pure hex.
            let Some(thread_id) = key.strip_prefix(&head).and_then(|k| k.strip_suffix(&tail)).and_then(unhex)
            else {
                continue;
            };
            let members: Vec<String> = redis::cmd("ZRANGE")
                .arg(&key)
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await
                .map_err(|e| self.backend(e))?;
            // The newest checkpoint of any namespace: members are `<hex ns>:<id>`.
            let latest = members.iter().filter_map(|m| m.split_once(':')).max_by(|a, b| a.1.cmp(b.1));
            let Some((_, latest_id)) = latest else { continue };
            let member = latest.map(|(ns, id)| format!("{ns}:{id}")).unwrap_or_default();
            let mut namespaces: Vec<&str> =
                members.iter().filter_map(|m| m.split_once(':')).map(|(ns, _)| ns).collect();
            namespaces.sort_unstable();
            namespaces.dedup();
            let counts = (members.len() as u64, namespaces.len() as u64);
            threads.push((thread_id, counts, latest_id.to_owned(), member));
        }
        threads.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        threads.truncate(limit);
        let mut out = Vec::with_capacity(threads.len());
        for (thread_id, (checkpoints, namespaces), latest_id, member) in threads {
            let keys = self.saver.thread_keys(&thread_id);
            let record: Option<Vec<u8>> = redis::cmd("HGET")
                .arg(&keys.checkpoints)
                .arg(&member)
                .query_async(&mut conn)
                .await
                .map_err(|e| self.backend(e))?;
            let record: Json = record.and_then(|r| parse_json(&r).ok()).unwrap_or_default();
            out.push(ThreadInfo {
                thread_id,
                checkpoints,
                namespaces,
                latest_id,
                latest_step: record.pointer("/metadata/step").and_then(Json::as_i64),
                latest_ts: record.pointer("/checkpoint/ts").and_then(Json::as_str).map(str::to_owned),
            });
        }
        Ok(out)
    }

    /// A thread's hashes read field by field, every value decoded on its own.
    pub(super) async fn raw(
        &self,
        thread_id: &str,
        ns: &str,
        only: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<Snapshot>> {
        let keys = self.saver.thread_keys(thread_id);
        let ns_hex = hex::encode(ns);
        let mut conn = self.conn.clone();
        let mut members: Vec<String> = redis::cmd("ZRANGEBYLEX")
            .arg(&keys.index)
            .arg(format!("[{ns_hex}:"))
            .arg(format!("({ns_hex};"))
            .query_async(&mut conn)
            .await
            .map_err(|e| self.backend(e))?;
        members.reverse();
        if let Some(id) = only {
            members.retain(|m| m.split_once(':').is_some_and(|(_, i)| i == id));
        }
        members.truncate(limit.unwrap_or(usize::MAX));
        let mut out = Vec::with_capacity(members.len());
        for member in members {
            let id = member.split_once(':').map(|(_, id)| id.to_owned()).unwrap_or_default();
            let mut raw = RawCheckpoint {
                thread_id: thread_id.to_owned(),
                checkpoint_ns: ns.to_owned(),
                checkpoint_id: id.clone(),
                ..RawCheckpoint::default()
            };
            let record: Option<Vec<u8>> = redis::cmd("HGET")
                .arg(&keys.checkpoints)
                .arg(&member)
                .query_async(&mut conn)
                .await
                .map_err(|e| self.backend(e))?;
            // Floats read as the exact doubles stored.
            match record.map(|r| parse_json(&r)) {
                Some(Ok(mut record)) => {
                    raw.document = record["checkpoint"].take();
                    raw.metadata = record["metadata"].take();
                    raw.parent_id = record["parent_checkpoint_id"].as_str().map(str::to_owned);
                }
                Some(Err(e)) => {
                    raw.problems.push(format!("key `{}` field `{member}`: not JSON: {e}", keys.checkpoints))
                }
                None => raw.problems.push(format!("key `{}` field `{member}`: missing", keys.checkpoints)),
            }
            raw.blobs = self.raw_blobs(&keys, &ns_hex, &raw.document).await?;
            raw.writes = self.raw_writes(&keys, &ns_hex, &id).await?;
            out.push(Snapshot::from_raw(raw));
        }
        Ok(out)
    }

    /// The blobs a checkpoint document points at (channels without an inline value).
    async fn raw_blobs(
        &self,
        keys: &ThreadKeys,
        ns_hex: &str,
        document: &Json,
    ) -> Result<Vec<(String, Decoded)>> {
        let inline = document.get("channel_values").and_then(Json::as_object);
        let Some(versions) = document.get("channel_versions").and_then(Json::as_object) else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut conn = self.conn.clone();
        for (channel, version) in versions {
            if inline.is_some_and(|m| m.contains_key(channel)) {
                continue;
            }
            let version = version.as_str().map_or_else(|| version.to_string(), str::to_owned);
            let field = format!("{ns_hex}:{}:{}", hex::encode(channel), hex::encode(version));
            let bytes: Option<Vec<u8>> = redis::cmd("HGET")
                .arg(&keys.blobs)
                .arg(&field)
                .query_async(&mut conn)
                .await
                .map_err(|e| self.backend(e))?;
            let Some(bytes) = bytes else { continue };
            match unwrap_record::<1>(&bytes) {
                Ok(([kind], _)) if kind == "empty" => {}
                Ok(([kind], payload)) => out.push((channel.clone(), Decoded::from_typed(&kind, &payload))),
                Err(e) => out.push((channel.clone(), Decoded::undecodable("?", e, &bytes))),
            }
        }
        Ok(out)
    }

    /// The pending writes of checkpoint `id`, as `(task_id, idx, channel, value)`.
    async fn raw_writes(
        &self,
        keys: &ThreadKeys,
        ns_hex: &str,
        id: &str,
    ) -> Result<Vec<(String, i64, String, Decoded)>> {
        let id_hex = hex::encode(id);
        let mut conn = self.conn.clone();
        let fields: Vec<String> = redis::cmd("ZRANGEBYLEX")
            .arg(&keys.write_index)
            // `;` follows `:`, and hex contains neither: exactly this checkpoint's fields.
            .arg(format!("[{ns_hex}:{id_hex}:"))
            .arg(format!("({ns_hex}:{id_hex};"))
            .query_async(&mut conn)
            .await
            .map_err(|e| self.backend(e))?;
        let mut out = Vec::with_capacity(fields.len());
        for field in fields {
            let mut parts = field.rsplitn(3, ':');
            let idx = parts.next().and_then(|i| i.parse().ok()).unwrap_or_default();
            let task_id = parts.next().and_then(unhex).unwrap_or_default();
            let bytes: Option<Vec<u8>> = redis::cmd("HGET")
                .arg(&keys.writes)
                .arg(&field)
                .query_async(&mut conn)
                .await
                .map_err(|e| self.backend(e))?;
            let Some(bytes) = bytes else { continue };
            match unwrap_record::<3>(&bytes) {
                Ok(([channel, _task_path, kind], payload)) => {
                    out.push((task_id, idx, channel, Decoded::from_typed(&kind, &payload)));
                }
                Err(e) => out.push((task_id, idx, "?".to_owned(), Decoded::undecodable("?", e, &bytes))),
            }
        }
        Ok(out)
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

/// The `SCAN` pattern of every thread's index key, and the text before and after the hex tag.
fn index_pattern(prefix: &str) -> (String, String, String) {
    // `ThreadKeys` of the empty thread id: `<prefix>:{t}:idx`; the tag's hex goes after `{t`.
    let sample = ThreadKeys::new(prefix, "").index;
    let split = sample.find("{t").map_or(sample.len(), |i| i + 2);
    let (head, tail) = sample.split_at(split);
    let mut pattern = String::with_capacity(sample.len() + 4);
    for c in head.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('*');
    pattern.push_str(tail);
    (pattern, head.to_owned(), tail.to_owned())
}

/// The UTF-8 string hex-encoded in `s`, as the saver encodes key and field names.
fn unhex(s: &str) -> Option<String> {
    String::from_utf8(hex::decode(s).ok()?).ok()
}

/// A field the saver wrote as a msgpack array of `N` strings and a binary payload.
fn unwrap_record<const N: usize>(bytes: &[u8]) -> Result<([String; N], Vec<u8>), String> {
    let value = rmpv::decode::read_value(&mut &bytes[..]).map_err(|e| format!("not msgpack: {e}"))?;
    let rmpv::Value::Array(mut items) = value else { return Err("not a msgpack array".to_owned()) };
    if items.len() != N + 1 {
        return Err(format!("{} items, expected {}", items.len(), N + 1));
    }
    let payload = match items.pop() {
        Some(rmpv::Value::Binary(b)) => b,
        _ => return Err("the payload is not binary".to_owned()),
    };
    let mut strings: [String; N] = std::array::from_fn(|_| String::new());
    for (slot, item) in strings.iter_mut().zip(items) {
        *slot = item.as_str().ok_or("an item is not a string")?.to_owned();
    }
    Ok((strings, payload))
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

    #[test]
    fn index_keys_are_matched_and_decoded() {
        let (pattern, head, tail) = index_pattern("a*b");
        assert_eq!(pattern, "a\\*b:{t*}:idx");
        let key = ThreadKeys::new("a*b", "线程:1").index;
        let tag = key.strip_prefix(&head).and_then(|k| k.strip_suffix(&tail)).unwrap();
        assert_eq!(unhex(tag).as_deref(), Some("线程:1"));
        assert_eq!(hex::encode("线程:1"), tag);
        assert_eq!(unhex("zz"), None);
    }

    #[test]
    fn stored_fields_unwrap_or_say_why_not() {
        let mut bytes = Vec::new();
        let value = rmpv::Value::Array(vec!["msgpack".into(), rmpv::Value::Binary(vec![0xc0])]);
        rmpv::encode::write_value(&mut bytes, &value).unwrap();
        assert_eq!(unwrap_record::<1>(&bytes).unwrap(), (["msgpack".to_owned()], vec![0xc0]));
        assert!(unwrap_record::<3>(&bytes).unwrap_err().contains("items"));
        assert!(unwrap_record::<1>(b"\xc1").is_err());
    }
}
