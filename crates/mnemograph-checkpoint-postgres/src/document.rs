//! The rows a checkpoint becomes: its JSONB document and metadata as text, and the blobs of the
//! channels whose values are new.
//!
//! LangGraph inlines `None`, `str`, `int`, `float` and `bool` values in the document and stores
//! the others in `checkpoint_blobs`. A text value that would have to be escaped to fit in JSONB
//! (see [`text`](crate::text)) goes to a blob instead, where its bytes need no escaping and
//! Python's saver reads it as usual (it reads a blob over an inline value).

use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::serde::{checkpoint_to_json, dumps_typed};
use mnemograph_checkpoint::checkpoint::{ChannelVersions, Checkpoint, CheckpointError, CheckpointMetadata};
use serde_json::Value;

use crate::error::Error;
use crate::text::{escape, escape_json, json_needs_escape};

/// A checkpoint ready for its `INSERT`s, every text in stored form.
#[derive(Debug)]
pub(crate) struct Rows {
    /// The `checkpoint` column, JSON text.
    pub(crate) document: String,
    /// The `metadata` column, JSON text.
    pub(crate) metadata: String,
    /// `(channel, version, type, blob)` of each new non-inline value.
    pub(crate) blobs: Vec<(String, String, String, Vec<u8>)>,
}

/// Splits `checkpoint` into its rows; blobs only for the channels of `new_versions`, at the
/// version given there.
pub(crate) fn rows(
    checkpoint: &Checkpoint,
    metadata: &CheckpointMetadata,
    new_versions: &ChannelVersions,
) -> Result<Rows, CheckpointError> {
    let (mut doc, mut blobs) = checkpoint_to_json(checkpoint).map_err(Error::Codec)?;
    if let Some(Value::Object(mut inline)) = doc.remove("channel_values") {
        let moved: Vec<String> =
            inline.iter().filter(|(_, v)| json_needs_escape(v)).map(|(k, _)| k.clone()).collect();
        for channel in moved {
            inline.remove(&channel);
            let version = checkpoint.channel_versions.get(&channel).ok_or_else(|| {
                CheckpointError::Invalid(format!("channel `{channel}` has a value but no version"))
            })?;
            let value = checkpoint.channel_values[&*channel].clone();
            blobs.push((Arc::from(channel.as_str()), Arc::clone(version), value));
        }
        doc.insert("channel_values", Value::Object(inline));
    }
    let doc = escape_json(doc.into_value());
    let metadata = escape_json(metadata.to_json().into_value());

    let mut rows = Vec::with_capacity(blobs.len());
    for (channel, _, value) in blobs {
        let Some(version) = new_versions.get(&channel) else { continue };
        let (kind, bytes) = dumps_typed(&value).map_err(Error::Codec)?;
        rows.push((escape(&channel).into_owned(), escape(version).into_owned(), kind, bytes));
    }
    Ok(Rows { document: json_text(&doc)?, metadata: json_text(&metadata)?, blobs: rows })
}

/// JSON text of a document built here.
pub(crate) fn json_text(value: &Value) -> Result<String, CheckpointError> {
    serde_json::to_string(value).map_err(|e| CheckpointError::Invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use mnemograph_checkpoint::checkpoint::CheckpointSource;
    use mnemograph_checkpoint::value::ChannelValue;

    use super::*;

    fn checkpoint(values: &[(&str, ChannelValue)]) -> (Checkpoint, ChannelVersions) {
        let mut cp = Checkpoint { v: 4, id: "1".into(), ts: "t".into(), ..Checkpoint::default() };
        for (channel, value) in values {
            cp.channel_values.insert((*channel).into(), value.clone());
            cp.channel_versions.insert((*channel).into(), "1".into());
        }
        let versions = cp.channel_versions.clone();
        (cp, versions)
    }

    #[test]
    fn primitives_stay_inline_and_lists_become_blobs() {
        let (cp, versions) =
            checkpoint(&[("n", ChannelValue::new(3)), ("list", ChannelValue::new(vec!["a".to_owned()]))]);
        let rows = rows(&cp, &CheckpointMetadata::new(CheckpointSource::Loop, 0), &versions).unwrap();
        let doc: Value = serde_json::from_str(&rows.document).unwrap();
        assert_eq!(doc["channel_values"], serde_json::json!({"n": 3}));
        assert_eq!(rows.blobs.len(), 1);
        assert_eq!((rows.blobs[0].0.as_str(), rows.blobs[0].2.as_str()), ("list", "msgpack"));
    }

    #[test]
    fn text_with_nul_becomes_a_blob_and_no_nul_is_stored() {
        let (cp, versions) = checkpoint(&[("s", ChannelValue::new("a\0b")), ("c\0", ChannelValue::new(1))]);
        let mut metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
        metadata.extra.insert("k".into(), "a\0".into());
        let rows = rows(&cp, &metadata, &versions).unwrap();
        for text in [&rows.document, &rows.metadata] {
            assert!(!text.contains("\\u0000"), "{text}");
        }
        assert_eq!(rows.blobs.len(), 1);
        assert_eq!(rows.blobs[0].0, "s");
    }
}
