//! The stored checkpoints of a saver that keeps each checkpoint whole, channel values inside, as
//! one typed document: LangGraph's SQLite saver (`checkpoints.type`, `checkpoints.checkpoint`).
//! Its values are shown as blobs, one per channel, so a reader sees them as it sees the values
//! other savers keep apart from the record.

use serde_json::Value as Json;

use super::{both, json_column, writes_of, StoredCheckpoint, StoredRecord, StoredValue, WriteRow};
use crate::checkpoint::serde::{split_document, value_bytes, PackedValue};

/// The only document type LangGraph's SQLite saver writes.
const MSGPACK: &str = "msgpack";

/// A row of a `checkpoints` table holding whole documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedRow {
    /// `checkpoint_id`.
    pub checkpoint_id: String,
    /// `parent_checkpoint_id`.
    pub parent_checkpoint_id: Option<String>,
    /// `type`, the document's serializer type; `None` when NULL.
    pub kind: Option<String>,
    /// `checkpoint`, the document's bytes; `None` when NULL.
    pub checkpoint: Option<Vec<u8>>,
    /// `metadata` as text (`Err` when the driver could not read it as text).
    pub metadata: Result<Option<String>, String>,
}

impl PackedRow {
    /// The record of this row: the document without its channel values, as JSON, and the
    /// metadata; or what is wrong with them.
    ///
    /// # Errors
    /// What is wrong with the document or the metadata, as text.
    pub fn record(&self) -> Result<StoredRecord, String> {
        let document = document(self.kind.as_deref(), self.checkpoint.as_deref()).map(|(doc, _)| doc);
        self.record_of(document)
    }

    /// The record, and the channel values by channel in stored order (none when the document
    /// does not read; all of them when only the metadata does not).
    fn split(&self) -> (Result<StoredRecord, String>, Vec<(String, StoredValue)>) {
        let split = document(self.kind.as_deref(), self.checkpoint.as_deref())
            .and_then(|(doc, values)| Ok((doc, blobs(values)?)));
        let (document, values) = match split {
            Ok((document, values)) => (Ok(document), values),
            Err(problem) => (Err(problem), Vec::new()),
        };
        (self.record_of(document), values)
    }

    /// The record of `document` (the row's document without its values) and the row's metadata.
    fn record_of(&self, document: Result<Json, String>) -> Result<StoredRecord, String> {
        both(document, json_column("metadata", &self.metadata)).map(|(checkpoint, metadata)| StoredRecord {
            checkpoint,
            metadata,
            parent_checkpoint_id: self.parent_checkpoint_id.clone(),
        })
    }
}

/// The document as JSON without `channel_values`, and the values as read, not yet encoded: a
/// reader of the record alone does not pay for them.
fn document(kind: Option<&str>, bytes: Option<&[u8]>) -> Result<(Json, Vec<PackedValue>), String> {
    let bytes = match (kind, bytes) {
        (Some(MSGPACK), Some(bytes)) => bytes,
        (_, None) => return Err("`checkpoint` is NULL".to_owned()),
        (kind, Some(_)) => return Err(format!("`checkpoint` of type {kind:?} is not a msgpack document")),
    };
    split_document(bytes).map_err(|e| format!("`checkpoint` does not read: {e}"))
}

/// The channel values of a document as typed blobs.
fn blobs(values: Vec<PackedValue>) -> Result<Vec<(String, StoredValue)>, String> {
    values
        .into_iter()
        .map(|(channel, value)| {
            let value = match value_bytes(&value).map_err(|e| format!("`checkpoint` does not read: {e}"))? {
                Some(payload) => StoredValue::Typed { kind: MSGPACK.to_owned(), payload },
                None => StoredValue::Typed { kind: "null".to_owned(), payload: Vec::new() },
            };
            Ok((channel, value))
        })
        .collect()
}

/// The checkpoints of one namespace from rows of a table of whole documents, in the order wanted,
/// and the namespace's pending writes (in stored order). Every channel value of a document is a
/// blob of the checkpoint; a document that does not read is the record's problem, with no blobs,
/// and metadata that does not read is the record's problem next to the blobs.
pub fn from_packed(checkpoint_ns: &str, rows: Vec<PackedRow>, writes: &[WriteRow]) -> Vec<StoredCheckpoint> {
    rows.into_iter()
        .map(|row| {
            let (record, blobs) = row.split();
            StoredCheckpoint {
                checkpoint_ns: checkpoint_ns.to_owned(),
                writes: writes_of(&row.checkpoint_id, writes, |s| s),
                checkpoint_id: row.checkpoint_id,
                record,
                blobs,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::serde::{checkpoint_to_msgpack, loads_typed};
    use crate::checkpoint::Checkpoint;
    use crate::messages::Message;
    use crate::value::ChannelValue;

    fn row(id: &str, checkpoint: Option<Vec<u8>>, metadata: &str) -> PackedRow {
        PackedRow {
            checkpoint_id: id.into(),
            parent_checkpoint_id: Some("p".into()),
            kind: Some(MSGPACK.into()),
            checkpoint,
            metadata: Ok(Some(metadata.into())),
        }
    }

    #[test]
    fn every_value_of_the_document_is_a_blob_of_its_channel() {
        let mut cp = Checkpoint {
            v: 4,
            id: "x".into(),
            ts: "2026-12-07T00:00:00+00:00".into(),
            ..Checkpoint::default()
        };
        cp.channel_values.insert("branch:to:a".into(), ChannelValue::Null);
        cp.channel_values.insert("count".into(), ChannelValue::new(3_i64));
        cp.channel_values.insert("messages".into(), ChannelValue::new(vec![Message::human("hi")]));
        cp.channel_versions.insert("count".into(), "1".into());
        let bytes = checkpoint_to_msgpack(&cp).unwrap();
        let write = WriteRow { checkpoint_id: Some("x".into()), idx: -1, ..WriteRow::default() };
        let out = from_packed("ns", vec![row("x", Some(bytes), r#"{"step":2}"#)], &[write]);

        let record = out[0].record.as_ref().unwrap();
        assert_eq!(record.checkpoint["ts"], "2026-12-07T00:00:00+00:00");
        assert_eq!(record.checkpoint["channel_versions"]["count"], "1");
        assert!(record.checkpoint.get("channel_values").is_none(), "the values are blobs");
        assert_eq!(
            (record.metadata["step"].as_i64(), record.parent_checkpoint_id.as_deref()),
            (Some(2), Some("p"))
        );
        let channels: Vec<&str> = out[0].blobs.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(channels, ["branch:to:a", "count", "messages"], "every value, unversioned ones too");
        assert_eq!(out[0].blobs[0].1, StoredValue::Typed { kind: "null".into(), payload: Vec::new() });
        let StoredValue::Typed { kind, payload } = &out[0].blobs[2].1 else { panic!("{:?}", out[0].blobs) };
        let messages: Vec<Message> = loads_typed(kind, payload).unwrap().decode().unwrap();
        assert_eq!(messages[0].text(), "hi");
        assert_eq!((out[0].checkpoint_ns.as_str(), out[0].writes.len()), ("ns", 1));
    }

    #[test]
    fn a_document_that_does_not_read_is_the_record_s_problem() {
        let not_msgpack = row("a", Some(vec![0xc1]), "{}");
        let mut json_typed = row("b", Some(b"{}".to_vec()), "{");
        json_typed.kind = Some("json".into());
        let missing = row("c", None, "{}");
        let out = from_packed("", vec![not_msgpack, json_typed, missing], &[]);
        let problems: Vec<&str> = out.iter().map(|c| c.record.as_ref().unwrap_err().as_str()).collect();
        assert!(problems[0].starts_with("`checkpoint` does not read"), "{problems:?}");
        assert!(
            problems[1].contains("of type Some(\"json\")") && problems[1].contains("`metadata` is not JSON"),
            "{problems:?}"
        );
        assert_eq!(problems[2], "`checkpoint` is NULL");
        assert!(out.iter().all(|c| c.blobs.is_empty()));

        let mut cp = Checkpoint { v: 4, id: "d".into(), ts: "t".into(), ..Checkpoint::default() };
        cp.channel_values.insert("count".into(), ChannelValue::new(1_i64));
        let out = from_packed("", vec![row("d", Some(checkpoint_to_msgpack(&cp).unwrap()), "{")], &[]);
        assert!(out[0].record.as_ref().unwrap_err().starts_with("`metadata` is not JSON"));
        assert_eq!(out[0].blobs.len(), 1, "the values still show");
    }
}
