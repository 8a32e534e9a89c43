//! Turning rows of [`sql::select`](crate::sql::select) back into checkpoint tuples.

use base64::Engine as _;
use mnemograph_checkpoint::checkpoint::{
    CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple, PendingWrite,
};
use serde_json::Value;
use sqlx::mysql::MySqlRow;
use sqlx::{MySqlPool, Row as _};

use mnemograph_checkpoint::checkpoint::serde::{self as codec, checkpoint_from_json, loads_typed};

use crate::error::backend;
use crate::read_io::ReadIo;
use crate::sql::Layout;

/// One selected row, values too large for the row's aggregates fetched on their own; the
/// channel values stay bytes until [`RawTuple::finish`] (delta blobs are resolved in between).
pub(crate) async fn raw(
    pool: &MySqlPool,
    layout: Layout,
    row: &MySqlRow,
) -> Result<RawTuple, CheckpointError> {
    let mut raw = parse(row)?;
    raw.fetch_oversized(pool, layout).await?;
    Ok(raw)
}

/// A selected row, read but with its channel values still as stored bytes, so that delta blobs
/// can be resolved (see [`delta::read`](crate::delta)) before they are decoded.
#[derive(Debug)]
pub(crate) struct RawTuple {
    /// The thread.
    pub(crate) thread_id: String,
    /// The namespace.
    pub(crate) checkpoint_ns: String,
    /// The checkpoint.
    pub(crate) checkpoint_id: String,
    /// Its parent, if any.
    parent_id: Option<String>,
    /// The `checkpoint` JSON document.
    pub(crate) document: Value,
    /// The metadata, decoded.
    metadata: CheckpointMetadata,
    /// The blobs of its channel versions, `empty` and NULL ones left out.
    pub(crate) blobs: Vec<RawBlob>,
    /// The pending writes, decoded, with their `idx`.
    pub(crate) writes: Vec<(i64, PendingWrite)>,
    /// The blobs did not all fit in the read statement's aggregate: `blobs` is to be fetched
    /// again on its own ([`RawTuple::fetch_oversized`]).
    pub(crate) blobs_incomplete: bool,
    /// The same for `writes`.
    pub(crate) writes_incomplete: bool,
    /// The bytes received for it, and the statements sent for it beyond the read statement.
    pub(crate) io: ReadIo,
}

/// One channel value of a [`RawTuple`], as stored.
#[derive(Debug)]
pub(crate) struct RawBlob {
    /// The channel.
    pub(crate) channel: String,
    /// The `type` column.
    pub(crate) kind: String,
    /// The `blob` column.
    pub(crate) bytes: Vec<u8>,
}

impl RawTuple {
    /// [`CheckpointError::Corrupt`] naming this checkpoint and its thread.
    pub(crate) fn corrupt(&self, what: impl std::fmt::Display) -> CheckpointError {
        corrupt_at(&self.thread_id, &self.checkpoint_id, what)
    }

    /// The version the document gives `channel` (`None` when absent or not a string).
    pub(crate) fn version_of(&self, channel: &str) -> Option<&str> {
        self.document.get("channel_versions")?.get(channel)?.as_str()
    }

    /// Decodes the blobs and builds the tuple.
    pub(crate) fn finish(self) -> Result<CheckpointTuple, CheckpointError> {
        let mut blobs = Vec::with_capacity(self.blobs.len());
        for blob in &self.blobs {
            let value = loads_typed(&blob.kind, &blob.bytes)
                .map_err(|e| self.corrupt(format!("channel `{}`: {e}", blob.channel)))?;
            blobs.push((blob.channel.as_str().into(), value));
        }
        let checkpoint = checkpoint_from_json(&self.document, blobs).map_err(|e| self.corrupt(e))?;
        let (thread_id, checkpoint_ns) = (self.thread_id, self.checkpoint_ns);
        let address = |id: String| CheckpointConfig {
            thread_id: thread_id.clone(),
            checkpoint_ns: checkpoint_ns.clone(),
            checkpoint_id: Some(id),
        };
        Ok(CheckpointTuple {
            config: address(self.checkpoint_id),
            parent_config: self.parent_id.map(address),
            checkpoint,
            metadata: self.metadata,
            pending_writes: in_langgraph_order(self.writes),
        })
    }
}

/// Pending writes in LangGraph's order, by `(task_id, idx)`: the server returns them in none
/// (`JSON_ARRAYAGG`, a join), and LangGraph's MySQL saver sorts them so.
pub(crate) fn in_langgraph_order(mut writes: Vec<(i64, PendingWrite)>) -> Vec<PendingWrite> {
    writes.sort_by(|(a_idx, a), (b_idx, b)| (&a.task_id, a_idx).cmp(&(&b.task_id, b_idx)));
    writes.into_iter().map(|(_, w)| w).collect()
}

/// [`CheckpointError::Corrupt`] naming a checkpoint and its thread.
pub(crate) fn corrupt_at(
    thread_id: &str,
    checkpoint_id: &str,
    what: impl std::fmt::Display,
) -> CheckpointError {
    CheckpointError::Corrupt(format!("checkpoint {checkpoint_id} of thread `{thread_id}`: {what}"))
}

/// Reads one selected row; channel values stay bytes.
pub(crate) fn parse(row: &MySqlRow) -> Result<RawTuple, CheckpointError> {
    // `try_get_unchecked`: MySQL types JSON columns and JSON_ARRAYAGG results as `JSON`, and a
    // computed `_bin` string (the shallow saver's id, from the document) comes typed as a binary
    // BLOB; sqlx's `String` refuses both although the wire format is plain UTF-8 text.
    let received = std::cell::Cell::new(0);
    let text = |column: &str| {
        let value = row.try_get_unchecked::<Option<String>, _>(column).map_err(backend)?;
        received.set(received.get() + value.as_ref().map_or(0, String::len));
        Ok::<_, CheckpointError>(value)
    };
    let required = |column: &str| {
        text(column)?.ok_or_else(|| CheckpointError::Corrupt(format!("checkpoint row without `{column}`")))
    };
    let thread_id = required("thread_id")?;
    let checkpoint_ns = required("checkpoint_ns")?;
    let checkpoint_id = required("checkpoint_id")?;
    let parent_id = text("parent_checkpoint_id")?;
    let corrupt = |what: String| corrupt_at(&thread_id, &checkpoint_id, what);

    let document: Value = parse_json(text("checkpoint")?.as_deref(), "checkpoint").map_err(&corrupt)?;
    let metadata = parse_json(text("metadata")?.as_deref(), "metadata").map_err(&corrupt)?;
    // Its own message names neither the thread nor the checkpoint.
    let metadata = CheckpointMetadata::from_json(&metadata).map_err(|e| corrupt(e.to_string()))?;

    let mut blobs = Vec::new();
    let values = aggregate(text("channel_values")?.as_deref());
    let mut blobs_incomplete = values.is_none();
    for item in values.into_iter().flatten() {
        // `[channel, type, base64 blob or null, whether the blob is NULL]`. An `empty` blob
        // (written by older LangGraph versions for channels without a value) and a NULL blob
        // mean "no value"; a NULL rendering of a blob that is not NULL means it was too large.
        let (Some(channel), Some(kind), blob) = (str_at(&item, 0), str_at(&item, 1), item.get(2)) else {
            return Err(corrupt(format!("malformed channel value {item}")));
        };
        let Some(b64) = blob.and_then(Value::as_str) else {
            if !item.get(3).is_some_and(|null| null.as_bool() == Some(true) || null.as_i64() == Some(1)) {
                blobs_incomplete = true;
                break;
            }
            continue;
        };
        if kind == "empty" {
            continue;
        }
        let bytes = decode_blob(b64).map_err(|e| corrupt(format!("channel `{channel}`: {e}")))?;
        blobs.push(RawBlob { channel: channel.to_owned(), kind: kind.to_owned(), bytes });
    }

    let mut writes = Vec::new();
    let pending = aggregate(text("pending_writes")?.as_deref());
    let mut writes_incomplete = pending.is_none();
    for item in pending.into_iter().flatten() {
        // `[task_id, channel, type, base64 blob, idx]`; the blob column is NOT NULL, so a NULL
        // rendering means it was too large.
        if item.get(3).is_some_and(Value::is_null) {
            writes_incomplete = true;
            break;
        }
        let (Some(task_id), Some(channel), Some(b64), Some(idx)) =
            (str_at(&item, 0), str_at(&item, 1), str_at(&item, 3), item.get(4).and_then(Value::as_i64))
        else {
            return Err(corrupt(format!("malformed pending write {item}")));
        };
        let kind = str_at(&item, 2).unwrap_or("null");
        let bytes = decode_blob(b64).map_err(|e| corrupt(format!("write to `{channel}`: {e}")))?;
        let value = loads_typed(kind, &bytes).map_err(|e| corrupt(format!("write to `{channel}`: {e}")))?;
        writes.push((idx, PendingWrite { task_id: task_id.to_owned(), channel: channel.to_owned(), value }));
    }
    Ok(RawTuple {
        thread_id,
        checkpoint_ns,
        checkpoint_id,
        parent_id,
        document,
        metadata,
        blobs,
        writes,
        blobs_incomplete,
        writes_incomplete,
        io: ReadIo { bytes: received.get(), round_trips: 0 },
    })
}

/// The bytes of a blob rendered inside JSON: MySQL's `base64:type251:<data>` or MariaDB's
/// `TO_BASE64` output (wrapped every 76 characters). The data is what follows the last `:`.
pub(crate) fn decode_blob(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    let data = text.rsplit(':').next().unwrap_or(text);
    if data.contains(['\n', '\r']) {
        let joined: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        return base64::engine::general_purpose::STANDARD.decode(joined);
    }
    base64::engine::general_purpose::STANDARD.decode(data)
}

fn parse_json(text: Option<&str>, column: &str) -> Result<Value, String> {
    let text = text.ok_or_else(|| format!("`{column}` is NULL"))?;
    // Floats correctly rounded: an inline float value must read back as the double written.
    codec::parse_json(text.as_bytes()).map_err(|e| format!("`{column}` is not JSON: {e}"))
}

/// The items of an aggregate, `<count>:<JSON array>` (see [`sql::select`](crate::sql::select));
/// `None` when the array does not hold `count` items: the server left it out or cut it short
/// because it would have been larger than `max_allowed_packet`.
fn aggregate(text: Option<&str>) -> Option<Vec<Value>> {
    let (count, array) = text?.split_once(':').unwrap_or((text?, ""));
    let count: usize = count.parse().ok()?;
    if count == 0 {
        return Some(Vec::new());
    }
    match codec::parse_json(array.as_bytes()) {
        Ok(Value::Array(items)) if items.len() == count => Some(items),
        _ => None,
    }
}

fn str_at(item: &Value, i: usize) -> Option<&str> {
    item.get(i).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_decode_from_both_servers_renderings() {
        assert_eq!(decode_blob("base64:type251:aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_blob("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_blob("").unwrap(), b"");
        // MariaDB's TO_BASE64 wraps long output.
        let long = vec![7_u8; 100];
        let b64 = base64::engine::general_purpose::STANDARD.encode(&long);
        let wrapped = format!("{}\n{}", &b64[..76], &b64[76..]);
        assert_eq!(decode_blob(&wrapped).unwrap(), long);
        assert!(decode_blob("base64:type251:***").is_err());
    }

    #[test]
    fn aggregates_parse_and_incomplete_ones_are_told_apart() {
        assert!(aggregate(Some("0")).unwrap().is_empty());
        assert_eq!(aggregate(Some(r#"1:[["a", "msgpack", "AQ==", 0]]"#)).unwrap().len(), 1);
        // Left out (NULL, or the bare count), cut short, or fewer items than rows.
        for incomplete in [None, Some("2"), Some(r#"1:[["a", "msgp"#), Some(r#"2:[["a"]]"#), Some("1:{}")] {
            assert!(aggregate(incomplete).is_none(), "{incomplete:?}");
        }
        assert!(loads_typed("null", &decode_blob("").unwrap()).unwrap().is_null());
    }
}
