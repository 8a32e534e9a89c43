//! The saver's [`StoredView`]: the threads under its prefix, and each checkpoint's record, blobs
//! and pending writes as its keys hold them, every field unwrapped on its own.
//!
//! Nothing here writes, and nothing refreshes a thread's expiry.

use mnemograph_checkpoint::checkpoint::serde::parse_json;
use mnemograph_checkpoint::checkpoint::stored::{
    StoredCheckpoint, StoredRecord, StoredThread, StoredValue, StoredView, StoredWrite,
};
use mnemograph_checkpoint::checkpoint::CheckpointError;
use mnemograph_checkpoint::BoxFuture;
use serde_json::Value as Json;

use crate::checkpointer::RedisCheckpointer;
use crate::error::Result;
use crate::keys::{task_of_write_field, Ns, ThreadKeys};
use crate::reads::split_member;
use crate::record::{unwrap_blob, unwrap_write, EMPTY};

/// Listing threads walks the keyspace with `SCAN` (on every primary of a cluster): its cost grows
/// with the whole keyspace, so it is an operator's call, not one for a request path.
impl StoredView for RedisCheckpointer {
    fn stored_threads(&self, limit: usize) -> BoxFuture<'_, Result<Vec<StoredThread>, CheckpointError>> {
        Box::pin(async move { Ok(self.threads_as_stored(limit).await?) })
    }

    fn stored_checkpoints<'a>(
        &'a self,
        thread_id: &'a str,
        checkpoint_ns: &'a str,
        checkpoint_id: Option<&'a str>,
        limit: Option<usize>,
    ) -> BoxFuture<'a, Result<Vec<StoredCheckpoint>, CheckpointError>> {
        Box::pin(async move {
            Ok(self.checkpoints_as_stored(thread_id, checkpoint_ns, checkpoint_id, limit).await?)
        })
    }
}

impl RedisCheckpointer {
    /// See [`StoredView::stored_threads`].
    async fn threads_as_stored(&self, limit: usize) -> Result<Vec<StoredThread>> {
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

    /// See [`StoredView::stored_checkpoints`].
    async fn checkpoints_as_stored(
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
