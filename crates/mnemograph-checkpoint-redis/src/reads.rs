//! Reading checkpoints back: the `READ` script's reply turned into [`CheckpointTuple`]s, with
//! every missing or unreadable field reported by key and field.

use mnemograph_checkpoint::checkpoint::serde as codec;
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointTuple, PendingWrite};
use redis::Value;

use crate::error::{RedisSaverError, Result};
use crate::keys::{channel_of_blob_field, task_of_write_field, unhex_str, Ns, ThreadKeys};
use crate::record;

/// Which checkpoints of one namespace the `READ` script returns.
#[derive(Debug)]
pub(crate) enum Select {
    /// Newest first, members in `(min, max)` lexicographic bounds, at most `count` (-1: all).
    Range {
        /// Upper bound (`ZREVRANGEBYLEX` max).
        max: String,
        /// Lower bound.
        min: String,
        /// How many.
        count: i64,
    },
    /// These members, in this order, those that exist.
    Members(Vec<String>),
}

/// One checkpoint as the script returns it, before decoding.
#[derive(Debug)]
pub(crate) struct RawEntry {
    /// `<hex ns>:<checkpoint id>`.
    pub(crate) member: String,
    /// The record, if the `cp` field exists.
    record: Option<Vec<u8>>,
    /// The blob references, if the `ref` field exists.
    refs: Option<Vec<u8>>,
    /// Blob field → value (absent when the field does not exist).
    blobs: Vec<(String, Option<Vec<u8>>)>,
    /// Write field → value.
    writes: Vec<(String, Option<Vec<u8>>)>,
}

impl RawEntry {
    /// The stored bytes the entry carries: its record, blob references, blobs and writes.
    pub(crate) fn bytes(&self) -> usize {
        let values = self.blobs.iter().chain(&self.writes).filter_map(|(_, v)| v.as_ref());
        [&self.record, &self.refs].into_iter().flatten().chain(values).map(Vec::len).sum()
    }
}

/// The entries of a `READ` reply.
pub(crate) fn parse_reply(value: Value) -> Result<Vec<RawEntry>> {
    let bad = |what: &str| RedisSaverError::Invalid(format!("unexpected reply from the read script: {what}"));
    let Value::Array(entries) = value else { return Err(bad("not an array")) };
    entries
        .into_iter()
        .map(|entry| {
            let Value::Array(items) = entry else { return Err(bad("entry is not an array")) };
            let mut items = items.into_iter();
            let member =
                bytes(items.next()).and_then(|b| String::from_utf8(b).ok()).ok_or_else(|| bad("member"))?;
            let record = bytes(items.next());
            let refs = bytes(items.next());
            let blobs = pairs(items.next()).ok_or_else(|| bad("blobs"))?;
            let writes = pairs(items.next()).ok_or_else(|| bad("writes"))?;
            Ok(RawEntry { member, record, refs, blobs, writes })
        })
        .collect()
}

/// A bulk string's bytes; `None` for nil (a Lua `false`) or a missing item.
fn bytes(value: Option<Value>) -> Option<Vec<u8>> {
    match value? {
        Value::BulkString(b) => Some(b),
        Value::SimpleString(s) => Some(s.into_bytes()),
        _ => None,
    }
}

/// `(field, value)` pairs a script returned; the value is `None` where the field does not exist.
pub(crate) type Fields = Vec<(String, Option<Vec<u8>>)>;

/// A flat `[field, value, …]` array as pairs; a missing item (reads without values) is empty.
fn pairs(value: Option<Value>) -> Option<Fields> {
    let Some(value) = value else { return Some(Vec::new()) };
    let Value::Array(items) = value else { return None };
    let mut items = items.into_iter();
    let mut out = Vec::with_capacity(items.len() / 2);
    while let Some(field) = items.next() {
        let field = String::from_utf8(bytes(Some(field))?).ok()?;
        out.push((field, bytes(items.next())));
    }
    Some(out)
}

/// The checkpoint of `member` as a user names it, for error messages: keys and fields
/// hex-encode the thread id, namespace and channel, which nobody reads at a glance.
pub(crate) fn readable(thread_id: &str, member: &str) -> String {
    match split_member(member) {
        Some((ns, id)) => format!("thread `{thread_id}` namespace `{ns}` checkpoint {id}"),
        None => format!("thread `{thread_id}`"),
    }
}

/// Splits a member into its namespace and checkpoint id.
pub(crate) fn split_member(member: &str) -> Option<(String, &str)> {
    let (ns, id) = member.split_once(':')?;
    Some((unhex_str(ns)?, id))
}

impl RawEntry {
    /// The checkpoint's metadata and parent only (for filtering before values are fetched).
    /// `thread_id` is the thread of `keys`, named in errors.
    pub(crate) fn record(&self, keys: &ThreadKeys, thread_id: &str) -> Result<record::Record> {
        let bytes = self.record.as_deref().ok_or_else(|| RedisSaverError::Missing {
            key: keys.checkpoints.clone(),
            field: self.member.clone(),
            what: "checkpoint record",
        })?;
        record::decode_record(bytes).map_err(|e| {
            let reason = format!("{}: {e}", readable(thread_id, &self.member));
            RedisSaverError::corrupt(&keys.checkpoints, &self.member, reason)
        })
    }

    /// The full tuple of a `READ` entry fetched with values.
    pub(crate) fn into_tuple(self, keys: &ThreadKeys, thread_id: &str) -> Result<CheckpointTuple> {
        let record = self.record(keys, thread_id)?;
        let at = readable(thread_id, &self.member);
        let Some((checkpoint_ns, id)) = split_member(&self.member) else {
            return Err(RedisSaverError::corrupt(&keys.index, &self.member, "not a `<hex ns>:<id>` member"));
        };
        if self.refs.is_none() {
            let field = self.member.clone();
            return Err(RedisSaverError::Missing { key: keys.refs.clone(), field, what: "blob references" });
        }
        let mut values = Vec::with_capacity(self.blobs.len());
        for (field, value) in self.blobs {
            // A referenced blob that was never written is a channel with a version but no value.
            let Some(bytes) = value else { continue };
            let corrupt = |reason: String| RedisSaverError::corrupt(&keys.blobs, &field, reason);
            let channel =
                channel_of_blob_field(&field).ok_or_else(|| corrupt(format!("{at}: bad blob field name")))?;
            let value =
                record::decode_blob(&bytes).map_err(|e| corrupt(format!("{at} channel `{channel}`: {e}")))?;
            if let Some(value) = value {
                values.push((channel.into(), value));
            }
        }
        let pending = pending_writes(keys, &at, self.writes)?;
        let checkpoint = codec::checkpoint_from_json(&record.checkpoint, values)
            .map_err(|e| RedisSaverError::corrupt(&keys.checkpoints, &self.member, format!("{at}: {e}")))?;
        let address = |id: &str| CheckpointConfig {
            thread_id: thread_id.to_owned(),
            checkpoint_ns: checkpoint_ns.clone(),
            checkpoint_id: Some(id.to_owned()),
        };
        Ok(CheckpointTuple {
            config: address(id),
            parent_config: record.parent.as_deref().map(address),
            metadata: record.metadata,
            checkpoint,
            pending_writes: pending,
        })
    }
}

/// Decodes the write field/value pairs a script returned for the checkpoint described by `at`,
/// in the order of LangGraph's SQL savers: by task id, then index.
pub(crate) fn pending_writes(keys: &ThreadKeys, at: &str, writes: Fields) -> Result<Vec<PendingWrite>> {
    let mut pending = Vec::with_capacity(writes.len());
    for (field, value) in writes {
        let corrupt = |reason: String| RedisSaverError::corrupt(&keys.writes, &field, reason);
        let (task_id, idx) = task_of_write_field(&field)
            .ok_or_else(|| corrupt(format!("{at}: bad pending write field name")))?;
        let Some(bytes) = value else {
            let key = keys.writes.clone();
            return Err(RedisSaverError::Missing {
                key,
                field,
                what: "pending write listed in the write index",
            });
        };
        let (channel, value) = record::decode_write(&bytes)
            .map_err(|e| corrupt(format!("{at} pending write {idx} of task `{task_id}`: {e}")))?;
        pending.push(((task_id.clone(), idx), PendingWrite { task_id, channel, value }));
    }
    pending.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(pending.into_iter().map(|(_, w)| w).collect())
}

/// The reply of the `READ_CACHED` script: the pending writes of the remembered checkpoint when it
/// is still the one asked for and unchanged, `None` when the full read is needed.
pub(crate) fn parse_cached_reply(value: Value) -> Result<Option<Fields>> {
    let bad = || RedisSaverError::Invalid("unexpected reply from the cached read script".to_owned());
    let Value::Array(items) = value else { return Err(bad()) };
    let mut items = items.into_iter();
    match items.next() {
        Some(Value::Int(1)) => pairs(items.next()).map(Some).ok_or_else(bad),
        Some(Value::Int(0)) => Ok(None),
        _ => Err(bad()),
    }
}

/// The members of `ns` newest first, bounded above by `before` (exclusive).
pub(crate) fn range(ns: &Ns, before: Option<&str>, count: Option<usize>) -> Select {
    let max = before.map_or_else(|| ns.lex_max(), |b| ns.lex_before(b));
    let count = count.map_or(-1, |c| i64::try_from(c).unwrap_or(i64::MAX));
    Select::Range { max, min: ns.lex_min(), count }
}
