//! Turning rows of [`sql::select`](crate::sql::select) back into checkpoint tuples.

use base64::Engine as _;
use graph_core::checkpoint::{
    CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple, PendingWrite,
};
use serde_json::Value;
use sqlx::mysql::MySqlRow;
use sqlx::Row as _;

use graph_core::checkpoint::serde::{checkpoint_from_json, loads_typed};

use crate::error::backend;

/// The tuple of one selected row.
pub(crate) fn tuple(row: &MySqlRow) -> Result<CheckpointTuple, CheckpointError> {
    // `try_get_unchecked`: MySQL types JSON columns and JSON_ARRAYAGG results as `JSON`, and a
    // computed `_bin` string (the shallow saver's id, from the document) comes typed as a binary
    // BLOB; sqlx's `String` refuses both although the wire format is plain UTF-8 text.
    let text = |column: &str| row.try_get_unchecked::<Option<String>, _>(column).map_err(backend);
    let required = |column: &str| {
        text(column)?.ok_or_else(|| CheckpointError::Corrupt(format!("checkpoint row without `{column}`")))
    };
    let thread_id = required("thread_id")?;
    let checkpoint_ns = required("checkpoint_ns")?;
    let checkpoint_id = required("checkpoint_id")?;
    let parent_id = text("parent_checkpoint_id")?;
    let corrupt = |what: String| {
        CheckpointError::Corrupt(format!("checkpoint {checkpoint_id} of thread `{thread_id}`: {what}"))
    };

    let document: Value = parse(text("checkpoint")?.as_deref(), "checkpoint").map_err(&corrupt)?;
    let metadata = match parse(text("metadata")?.as_deref(), "metadata").map_err(&corrupt)? {
        Value::Object(m) => CheckpointMetadata::from_json(m)?,
        _ => return Err(corrupt("metadata is not an object".to_owned())),
    };

    let mut blobs = Vec::new();
    for item in array(text("channel_values")?.as_deref()).map_err(&corrupt)? {
        // `[channel, type, base64 blob or null]`. An `empty` blob (written by older LangGraph
        // versions for channels without a value) and a NULL blob mean "no value".
        let (Some(channel), Some(kind), blob) = (str_at(&item, 0), str_at(&item, 1), item.get(2)) else {
            return Err(corrupt(format!("malformed channel value {item}")));
        };
        let Some(b64) = blob.and_then(Value::as_str) else { continue };
        if kind == "empty" {
            continue;
        }
        let bytes = decode_blob(b64).map_err(|e| corrupt(format!("channel `{channel}`: {e}")))?;
        let value = loads_typed(kind, &bytes).map_err(|e| corrupt(format!("channel `{channel}`: {e}")))?;
        blobs.push((channel.to_owned(), value));
    }
    let checkpoint = checkpoint_from_json(&document, blobs).map_err(|e| corrupt(e.to_string()))?;

    let mut writes = Vec::new();
    for item in array(text("pending_writes")?.as_deref()).map_err(&corrupt)? {
        // `[task_id, channel, type, base64 blob, idx]`.
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
    // JSON_ARRAYAGG has no order; LangGraph's MySQL saver sorts by (task_id, idx).
    writes.sort_by(|(a_idx, a), (b_idx, b)| (&a.task_id, a_idx).cmp(&(&b.task_id, b_idx)));

    let address = |id: String| CheckpointConfig {
        thread_id: thread_id.clone(),
        checkpoint_ns: checkpoint_ns.clone(),
        checkpoint_id: Some(id),
    };
    Ok(CheckpointTuple {
        config: address(checkpoint_id.clone()),
        parent_config: parent_id.map(address),
        checkpoint,
        metadata,
        pending_writes: writes.into_iter().map(|(_, w)| w).collect(),
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

fn parse(text: Option<&str>, column: &str) -> Result<Value, String> {
    let text = text.ok_or_else(|| format!("`{column}` is NULL"))?;
    serde_json::from_str(text).map_err(|e| format!("`{column}` is not JSON: {e}"))
}

/// The items of an aggregated JSON array; NULL (no rows aggregated) is empty.
fn array(text: Option<&str>) -> Result<Vec<Value>, String> {
    match text.map(serde_json::from_str::<Value>) {
        None => Ok(Vec::new()),
        Some(Ok(Value::Array(items))) => Ok(items),
        Some(Ok(other)) => Err(format!("expected a JSON array, got {other}")),
        Some(Err(e)) => Err(format!("aggregate is not JSON: {e}")),
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
    fn aggregates_parse_and_null_is_empty() {
        assert!(array(None).unwrap().is_empty());
        assert_eq!(array(Some(r#"[["a", "msgpack", "AQ=="]]"#)).unwrap().len(), 1);
        assert!(array(Some("{}")).is_err());
        assert!(loads_typed("null", &decode_blob("").unwrap()).unwrap().is_null());
    }
}
