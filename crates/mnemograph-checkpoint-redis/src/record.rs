//! What the saver stores in each hash field, and reading it back with errors that name the field.
//!
//! Channel values and pending writes keep LangGraph's `(type, bytes)` pair from the serializer
//! unchanged, wrapped in a small msgpack array so one field holds everything and a reader that
//! finds anything else knows the field is corrupt. Checkpoint records are JSON, like the
//! `checkpoint`/`metadata` columns of the SQL savers, so a thread can be copied between stores
//! value for value.

use mnemograph_checkpoint::checkpoint::serde::{self as codec, JsonObject};
use mnemograph_checkpoint::checkpoint::CheckpointMetadata;
use mnemograph_checkpoint::value::ChannelValue;
use rmpv::{Utf8StringRef, ValueRef};
use serde_json::Value;

/// LangGraph's marker for "this channel had no value at this version".
pub(crate) const EMPTY: &str = "empty";

/// A msgpack array of strings followed by one binary payload.
fn encode(strings: &[&str], payload: &[u8]) -> Vec<u8> {
    let mut items: Vec<ValueRef<'_>> =
        strings.iter().map(|s| ValueRef::String(Utf8StringRef::from(*s))).collect();
    items.push(ValueRef::Binary(payload));
    let mut out = Vec::with_capacity(payload.len() + 16 + strings.iter().map(|s| s.len() + 5).sum::<usize>());
    // Writing into a Vec cannot fail.
    let _ = rmpv::encode::write_value_ref(&mut out, &ValueRef::Array(items));
    out
}

/// The `N` strings and the payload of [`encode`]'s output; an error describing what is wrong.
fn decode<const N: usize>(bytes: &[u8]) -> Result<([&str; N], &[u8]), String> {
    let mut rd = bytes;
    let value = rmpv::decode::read_value_ref(&mut rd).map_err(|e| format!("not msgpack: {e}"))?;
    if !rd.is_empty() {
        return Err(format!("{} trailing bytes after the msgpack value", rd.len()));
    }
    let ValueRef::Array(items) = value else { return Err("not an array".to_owned()) };
    if items.len() != N + 1 {
        return Err(format!("{} items, expected {}", items.len(), N + 1));
    }
    let mut strings = [""; N];
    for (slot, item) in strings.iter_mut().zip(&items) {
        *slot = match item {
            ValueRef::String(s) => s.into_str().ok_or("a string is not UTF-8")?,
            _ => return Err("an item is not a string".to_owned()),
        };
    }
    match items[N] {
        ValueRef::Binary(payload) => Ok((strings, payload)),
        _ => Err("the payload is not binary".to_owned()),
    }
}

/// A channel value as stored in the `blob` hash.
pub(crate) fn encode_blob(kind: &str, payload: &[u8]) -> Vec<u8> {
    encode(&[kind], payload)
}

/// The value of a `blob` field; `None` for LangGraph's `"empty"` marker.
pub(crate) fn decode_blob(bytes: &[u8]) -> Result<Option<ChannelValue>, String> {
    let ([kind], payload) = decode::<1>(bytes)?;
    if kind == EMPTY {
        return Ok(None);
    }
    value(kind, payload).map(Some)
}

/// The type name and payload of a `blob` field, not decoded (LangGraph's `"empty"` marker
/// included).
pub(crate) fn unwrap_blob(bytes: &[u8]) -> Result<(&str, &[u8]), String> {
    let ([kind], payload) = decode::<1>(bytes)?;
    Ok((kind, payload))
}

/// The channel, type name and payload of a `wr` field, not decoded.
pub(crate) fn unwrap_write(bytes: &[u8]) -> Result<(&str, &str, &[u8]), String> {
    let ([channel, _task_path, kind], payload) = decode::<3>(bytes)?;
    Ok((channel, kind, payload))
}

/// A pending write as stored in the `wr` hash (task id and index are in the field name).
pub(crate) fn encode_write(channel: &str, task_path: &str, kind: &str, payload: &[u8]) -> Vec<u8> {
    encode(&[channel, task_path, kind], payload)
}

/// The channel and value of a `wr` field.
pub(crate) fn decode_write(bytes: &[u8]) -> Result<(String, ChannelValue), String> {
    let ([channel, _task_path, kind], payload) = decode::<3>(bytes)?;
    Ok((channel.to_owned(), value(kind, payload)?))
}

/// A typed payload as a [`ChannelValue`]. `loads_typed` checks that a msgpack or JSON payload
/// is well formed: values decode lazily, and a bad payload found later could no longer say which
/// field it came from.
fn value(kind: &str, payload: &[u8]) -> Result<ChannelValue, String> {
    codec::loads_typed(kind, payload).map_err(|e| e.to_string())
}

/// A checkpoint record: the document of `checkpoint_to_json`, the metadata and the parent id.
#[derive(Debug)]
pub(crate) struct Record {
    /// The checkpoint document (inline values only).
    pub(crate) checkpoint: Value,
    /// The metadata.
    pub(crate) metadata: CheckpointMetadata,
    /// The parent checkpoint's id.
    pub(crate) parent: Option<String>,
}

/// A record as written: the keys in this order, and the document's and metadata's keys in
/// Python's order, whatever serde_json's features.
#[derive(serde::Serialize)]
struct RecordText<'a> {
    checkpoint: &'a JsonObject,
    metadata: JsonObject,
    parent_checkpoint_id: Option<&'a str>,
}

/// The JSON text of a record.
pub(crate) fn encode_record(
    checkpoint: &JsonObject,
    metadata: &CheckpointMetadata,
    parent: Option<&str>,
) -> Vec<u8> {
    let record = RecordText { checkpoint, metadata: metadata.to_json(), parent_checkpoint_id: parent };
    // String keys and JSON values only: serializing cannot fail.
    serde_json::to_vec(&record).unwrap_or_default()
}

/// A record read back, floats correctly rounded (an inline float reads back as the double
/// written).
pub(crate) fn decode_record(bytes: &[u8]) -> Result<Record, String> {
    let value = codec::parse_json(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(mut obj) = value else { return Err("not a JSON object".to_owned()) };
    let checkpoint = obj.remove("checkpoint").ok_or("no `checkpoint`")?;
    let metadata = obj.remove("metadata").ok_or("no `metadata`")?;
    let metadata = CheckpointMetadata::from_json(&metadata).map_err(|e| e.to_string())?;
    let parent = match obj.remove("parent_checkpoint_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id),
        Some(_) => return Err("`parent_checkpoint_id` is not a string".to_owned()),
    };
    Ok(Record { checkpoint, metadata, parent })
}

#[cfg(test)]
mod tests {
    use mnemograph_checkpoint::checkpoint::CheckpointSource;

    use super::*;

    #[test]
    fn blobs_and_writes_round_trip() {
        let bytes = rmp_serde::to_vec(&vec!["a"]).unwrap();
        let v = decode_blob(&encode_blob("msgpack", &bytes)).unwrap().unwrap();
        assert_eq!(v.decode::<Vec<String>>().unwrap(), ["a"]);
        assert!(decode_blob(&encode_blob(EMPTY, b"")).unwrap().is_none());
        assert!(decode_blob(&encode_blob("null", b"")).unwrap().unwrap().is_null());
        let (channel, v) = decode_write(&encode_write("ch", "p", "msgpack", &bytes)).unwrap();
        assert_eq!((channel.as_str(), v.decode::<Vec<String>>().unwrap()), ("ch", vec!["a".to_owned()]));
    }

    #[test]
    fn garbage_is_reported() {
        assert!(decode_blob(b"garbage").is_err());
        assert!(decode_blob(&encode_blob("msgpack", b"\x92\x01")).unwrap_err().contains("msgpack"));
        assert!(decode_blob(&encode_blob("", b"x")).is_err());
        assert!(decode_write(&encode_blob("msgpack", b"\x01")).is_err());
        assert!(decode_record(b"{}").is_err());
    }

    #[test]
    fn records_round_trip() {
        let meta = CheckpointMetadata::new(CheckpointSource::Loop, 3);
        let doc: JsonObject = [("id".to_owned(), Value::from("x"))].into_iter().collect();
        let r = decode_record(&encode_record(&doc, &meta, Some("p"))).unwrap();
        assert_eq!(
            (r.metadata, r.parent.as_deref(), &r.checkpoint["id"]),
            (meta, Some("p"), &Value::from("x"))
        );
    }

    #[test]
    fn records_keep_key_order_and_exact_floats() {
        let meta = CheckpointMetadata::new(CheckpointSource::Loop, 3);
        // A double whose shortest text serde_json without `float_roundtrip` reads one bit off.
        let hard = 3.026_199_944_157_320_3e-52_f64;
        let doc: JsonObject = [
            ("v", Value::from(4)),
            ("ts", Value::from("t")),
            ("channel_values", serde_json::json!({"f": hard})),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let text = encode_record(&doc, &meta, None);
        let text = std::str::from_utf8(&text).unwrap();
        assert!(text.starts_with(r#"{"checkpoint":{"v":4,"ts":"t","#), "{text}");
        assert!(text.contains(r#""metadata":{"source":"loop","step":3,"parents":{}}"#), "{text}");
        let read =
            decode_record(text.as_bytes()).unwrap().checkpoint["channel_values"]["f"].as_f64().unwrap();
        assert_eq!(read.to_bits(), hard.to_bits(), "{read:e}");
    }
}
