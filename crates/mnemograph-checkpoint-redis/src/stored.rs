//! A read-only view of what the saver stored, for tools that inspect threads (such as
//! `checkpoint-inspect`): the threads under the saver's prefix, and each checkpoint's record,
//! blobs and pending writes exactly as stored, every field decoded on its own. Where
//! [`Checkpointer::get_tuple`](mnemograph_checkpoint::checkpoint::Checkpointer::get_tuple) fails
//! on the first value it cannot read, this reports that value as [`StoredValue::Unreadable`] and
//! goes on, so a damaged thread can still be looked at.
//!
//! Nothing here writes, and nothing refreshes a thread's expiry.

use mnemograph_checkpoint::checkpoint::serde::parse_json;
use serde_json::Value as Json;

use crate::checkpointer::RedisCheckpointer;
use crate::error::Result;
use crate::keys::{task_of_write_field, Ns, ThreadKeys};
use crate::reads::split_member;
use crate::record::{unwrap_blob, unwrap_write, EMPTY};

/// A thread found under the saver's prefix.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredThread {
    /// The thread id.
    pub thread_id: String,
    /// How many checkpoints it holds, in every namespace.
    pub checkpoints: u64,
    /// How many namespaces it has checkpoints in.
    pub namespaces: u64,
    /// The id of its newest checkpoint, in any namespace.
    pub latest_id: String,
    /// That checkpoint's record, when it is stored and is JSON.
    pub latest_record: Option<StoredRecord>,
}

/// A checkpoint's record as stored: the checkpoint document and metadata as JSON (floats read as
/// the exact doubles stored), and the parent's id.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRecord {
    /// The checkpoint document (LangGraph's checkpoint without the values kept as blobs).
    pub checkpoint: Json,
    /// The metadata object.
    pub metadata: Json,
    /// The parent checkpoint's id.
    pub parent_checkpoint_id: Option<String>,
}

/// A stored value: LangGraph's `(type, bytes)`, or the bytes that could not be unwrapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredValue {
    /// A value in LangGraph's typed form (`msgpack`, `json`, `bytes`, `null`, ...).
    Typed {
        /// The serializer's type name.
        kind: String,
        /// The serialized bytes.
        payload: Vec<u8>,
    },
    /// A field the saver would refuse to read.
    Unreadable {
        /// What is wrong with it.
        reason: String,
        /// The field's bytes.
        bytes: Vec<u8>,
    },
}

/// A pending write as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredWrite {
    /// The task that wrote it.
    pub task_id: String,
    /// Its index within the task's writes (negative for LangGraph's special channels).
    pub idx: i64,
    /// The channel, when the field could be unwrapped.
    pub channel: Option<String>,
    /// The value.
    pub value: StoredValue,
}

/// One checkpoint as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCheckpoint {
    /// Its namespace.
    pub checkpoint_ns: String,
    /// Its id.
    pub checkpoint_id: String,
    /// Its record, or why it cannot be read.
    pub record: std::result::Result<StoredRecord, String>,
    /// The values kept apart from the record, by channel (LangGraph's `"empty"` markers left out).
    pub blobs: Vec<(String, StoredValue)>,
    /// Its pending writes, in stored order.
    pub writes: Vec<StoredWrite>,
}

impl RedisCheckpointer {
    /// The threads under the saver's prefix, newest checkpoint first (ties by thread id), at most
    /// `limit`.
    ///
    /// Walks the keyspace with `SCAN` (on every primary of a cluster): its cost grows with the
    /// whole keyspace, so it is an operator's call, not one for a request path.
    ///
    /// # Errors
    /// [`RedisSaverError::Redis`](crate::RedisSaverError::Redis) when the server fails.
    pub async fn stored_threads(&self, limit: usize) -> Result<Vec<StoredThread>> {
        let saver = self.uncached();
        let prefix = saver.prefix();
        let mut conn = saver.conn();
        let mut keys = conn.scan(&ThreadKeys::index_pattern(prefix), "zset").await?;
        // SCAN may return a key twice.
        keys.sort_unstable();
        keys.dedup();
        let mut found = Vec::new();
        for key in keys {
            // Keys under a longer prefix that happens to match the pattern are skipped here.
            let Some(thread_id) = ThreadKeys::thread_of_index(prefix, &key) else { continue };
            let members: Vec<String> =
                redis::cmd("ZRANGE").arg(&key).arg(0).arg(-1).query_async(&mut conn).await?;
            let parsed: Vec<(&str, &str)> = members.iter().filter_map(|m| m.split_once(':')).collect();
            let Some(&(ns, id)) = parsed.iter().max_by(|a, b| a.1.cmp(b.1)) else { continue };
            let mut namespaces: Vec<&str> = parsed.iter().map(|(ns, _)| *ns).collect();
            namespaces.sort_unstable();
            namespaces.dedup();
            let counts = (members.len() as u64, namespaces.len() as u64);
            found.push((thread_id, counts, id.to_owned(), format!("{ns}:{id}")));
        }
        found.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
        found.truncate(limit);
        let mut out = Vec::with_capacity(found.len());
        for (thread_id, (checkpoints, namespaces), latest_id, member) in found {
            let keys = saver.thread_keys(&thread_id);
            let record: Option<Vec<u8>> =
                redis::cmd("HGET").arg(&keys.checkpoints).arg(&member).query_async(&mut conn).await?;
            let latest_record = record.and_then(|r| read_record(&r).ok());
            out.push(StoredThread { thread_id, checkpoints, namespaces, latest_id, latest_record });
        }
        Ok(out)
    }

    /// The checkpoints of `thread_id` in namespace `checkpoint_ns` as stored, newest first: all of
    /// them, or only `checkpoint_id`, at most `limit`.
    ///
    /// # Errors
    /// [`RedisSaverError::Redis`](crate::RedisSaverError::Redis) when the server fails; what is
    /// wrong with a stored field is reported in the result instead.
    pub async fn stored_checkpoints(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<StoredCheckpoint>> {
        let saver = self.uncached();
        let keys = saver.thread_keys(thread_id);
        let ns = Ns::new(checkpoint_ns);
        let mut conn = saver.conn();
        let mut members: Vec<String> = redis::cmd("ZRANGEBYLEX")
            .arg(&keys.index)
            .arg(ns.lex_min())
            .arg(ns.lex_max())
            .query_async(&mut conn)
            .await?;
        members.reverse();
        if let Some(wanted) = checkpoint_id {
            members.retain(|m| split_member(m).is_some_and(|(_, id)| id == wanted));
        }
        members.truncate(limit.unwrap_or(usize::MAX));
        let mut out = Vec::with_capacity(members.len());
        for member in members {
            let id = split_member(&member).map(|(_, id)| id.to_owned()).unwrap_or_default();
            let record: Option<Vec<u8>> =
                redis::cmd("HGET").arg(&keys.checkpoints).arg(&member).query_async(&mut conn).await?;
            let record = match record {
                Some(bytes) => read_record(&bytes)
                    .map_err(|e| format!("key `{}` field `{member}`: {e}", keys.checkpoints)),
                None => Err(format!("key `{}` field `{member}`: missing", keys.checkpoints)),
            };
            let blobs = match &record {
                Ok(r) => self.stored_blobs(&keys, &ns, &r.checkpoint).await?,
                Err(_) => Vec::new(),
            };
            let writes = self.stored_writes(&keys, &ns, &id).await?;
            out.push(StoredCheckpoint {
                checkpoint_ns: checkpoint_ns.to_owned(),
                checkpoint_id: id,
                record,
                blobs,
                writes,
            });
        }
        Ok(out)
    }

    /// The blobs a checkpoint document points at: the channels with a version and no inline value.
    async fn stored_blobs(
        &self,
        keys: &ThreadKeys,
        ns: &Ns,
        document: &Json,
    ) -> Result<Vec<(String, StoredValue)>> {
        let inline = document.get("channel_values").and_then(Json::as_object);
        let Some(versions) = document.get("channel_versions").and_then(Json::as_object) else {
            return Ok(Vec::new());
        };
        let mut conn = self.uncached().conn();
        let mut out = Vec::new();
        for (channel, version) in versions {
            if inline.is_some_and(|m| m.contains_key(channel)) {
                continue;
            }
            let version = version.as_str().map_or_else(|| version.to_string(), str::to_owned);
            let bytes: Option<Vec<u8>> = redis::cmd("HGET")
                .arg(&keys.blobs)
                .arg(ns.blob_field(channel, &version))
                .query_async(&mut conn)
                .await?;
            let Some(bytes) = bytes else { continue };
            match unwrap_blob(&bytes) {
                Ok((kind, _)) if kind == EMPTY => {}
                Ok((kind, payload)) => out.push((
                    channel.clone(),
                    StoredValue::Typed { kind: kind.to_owned(), payload: payload.to_vec() },
                )),
                Err(reason) => out.push((channel.clone(), StoredValue::Unreadable { reason, bytes })),
            }
        }
        Ok(out)
    }

    /// The pending writes of checkpoint `id`, in stored order.
    async fn stored_writes(&self, keys: &ThreadKeys, ns: &Ns, id: &str) -> Result<Vec<StoredWrite>> {
        let mut conn = self.uncached().conn();
        let prefix = ns.writes_prefix(id);
        // `;` follows `:`, and hex contains neither: exactly this checkpoint's fields.
        let fields: Vec<String> = redis::cmd("ZRANGEBYLEX")
            .arg(&keys.write_index)
            .arg(format!("[{prefix}"))
            .arg(format!("({};", prefix.trim_end_matches(':')))
            .query_async(&mut conn)
            .await?;
        let mut out = Vec::with_capacity(fields.len());
        for field in fields {
            let (task_id, idx) = task_of_write_field(&field).unwrap_or_default();
            let bytes: Option<Vec<u8>> =
                redis::cmd("HGET").arg(&keys.writes).arg(&field).query_async(&mut conn).await?;
            let Some(bytes) = bytes else { continue };
            let write = match unwrap_write(&bytes) {
                Ok((channel, kind, payload)) => StoredWrite {
                    task_id,
                    idx,
                    channel: Some(channel.to_owned()),
                    value: StoredValue::Typed { kind: kind.to_owned(), payload: payload.to_vec() },
                },
                Err(reason) => StoredWrite {
                    task_id,
                    idx,
                    channel: None,
                    value: StoredValue::Unreadable { reason, bytes },
                },
            };
            out.push(write);
        }
        Ok(out)
    }
}

/// A record's JSON text, read with floats as the exact doubles stored.
fn read_record(bytes: &[u8]) -> std::result::Result<StoredRecord, String> {
    let mut record = parse_json(bytes).map_err(|e| format!("not JSON: {e}"))?;
    if !record.is_object() {
        return Err("not a JSON object".to_owned());
    }
    Ok(StoredRecord {
        checkpoint: record["checkpoint"].take(),
        metadata: record["metadata"].take(),
        parent_checkpoint_id: record["parent_checkpoint_id"].as_str().map(str::to_owned),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_or_say_why_not() {
        let r = read_record(br#"{"checkpoint":{"v":4},"metadata":{"step":1},"parent_checkpoint_id":"p"}"#)
            .unwrap();
        assert_eq!(r.parent_checkpoint_id.as_deref(), Some("p"));
        assert_eq!(r.metadata["step"], 1);
        assert!(read_record(b"[1]").unwrap_err().contains("object"));
        assert!(read_record(b"{").unwrap_err().contains("JSON"));
    }
}
