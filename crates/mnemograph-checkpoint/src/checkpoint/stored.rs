//! A read-only view of what a saver stored, for tools that inspect threads (such as
//! `checkpoint-inspect`): the saver's threads, and each checkpoint's record, blobs and pending
//! writes exactly as stored, every field read on its own. Where
//! [`Checkpointer::get_tuple`](super::Checkpointer::get_tuple) fails on the first value it cannot
//! read, a [`StoredView`] reports that value as [`StoredValue::Unreadable`] and goes on, so a
//! damaged thread can still be looked at.
//!
//! Each saver implements [`StoredView`] over its own storage format, so a tool reads every saver
//! alike and knows none of their formats. Savers on LangGraph's SQL tables (`checkpoints`,
//! `checkpoint_blobs`, `checkpoint_writes`) read the rows and hand them to [`from_tables`]; savers
//! keeping each checkpoint whole, channel values inside (LangGraph's SQLite saver), hand theirs to
//! [`from_packed`].

mod packed;

use std::collections::HashMap;

use serde_json::Value as Json;

use super::saver::BoxFuture;
use super::serde::parse_json;
use super::{CheckpointError, DynCheckpointer};

pub use self::packed::{from_packed, PackedRow};

/// The blob type LangGraph stores for a channel that has no value at its version.
const EMPTY: &str = "empty";

/// A saver whose stored threads can be read as stored. Nothing it does writes, and nothing
/// refreshes a thread's expiry.
pub trait StoredView: DynCheckpointer {
    /// The saver's threads, newest checkpoint first (ties by thread id), at most `limit`.
    ///
    /// # Errors
    /// [`CheckpointError::Backend`] when the storage fails.
    fn stored_threads(&self, limit: usize) -> BoxFuture<'_, Result<Vec<StoredThread>, CheckpointError>>;

    /// The checkpoints of `thread_id` in namespace `checkpoint_ns` as stored, newest first: all
    /// of them, or only `checkpoint_id`, at most `limit`.
    ///
    /// # Errors
    /// [`CheckpointError::Backend`] when the storage fails; what is wrong with a stored field is
    /// reported in the result instead.
    fn stored_checkpoints<'a>(
        &'a self,
        thread_id: &'a str,
        checkpoint_ns: &'a str,
        checkpoint_id: Option<&'a str>,
        limit: Option<usize>,
    ) -> BoxFuture<'a, Result<Vec<StoredCheckpoint>, CheckpointError>>;
}

/// A thread a saver holds.
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
    pub record: Result<StoredRecord, String>,
    /// The values kept apart from the record, by channel (LangGraph's `"empty"` markers left out).
    pub blobs: Vec<(String, StoredValue)>,
    /// Its pending writes, in stored order.
    pub writes: Vec<StoredWrite>,
}

/// A row of LangGraph's `checkpoints` table, its JSON columns as text (`Err` when the driver
/// could not read one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointRow {
    /// `checkpoint_id`.
    pub checkpoint_id: String,
    /// `parent_checkpoint_id`.
    pub parent_checkpoint_id: Option<String>,
    /// `checkpoint`, the document.
    pub checkpoint: Result<Option<String>, String>,
    /// `metadata`.
    pub metadata: Result<Option<String>, String>,
}

/// A row of LangGraph's `checkpoint_blobs` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlobRow {
    /// `channel`.
    pub channel: String,
    /// `version`.
    pub version: String,
    /// `type`; `None` when NULL.
    pub kind: Option<String>,
    /// `blob`; `None` when NULL.
    pub blob: Option<Vec<u8>>,
}

/// A row of LangGraph's `checkpoint_writes` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteRow {
    /// `checkpoint_id`.
    pub checkpoint_id: Option<String>,
    /// `task_id`.
    pub task_id: Option<String>,
    /// `idx`.
    pub idx: i64,
    /// `channel`.
    pub channel: Option<String>,
    /// `type`; `None` when NULL.
    pub kind: Option<String>,
    /// `blob`; `None` when NULL.
    pub blob: Option<Vec<u8>>,
}

/// A row of a SQL saver's thread query: a thread, its counts, and its newest checkpoint's row.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadRow {
    /// The thread id, as callers see it.
    pub thread_id: String,
    /// How many checkpoints it holds, in every namespace.
    pub checkpoints: i64,
    /// How many namespaces it has checkpoints in.
    pub namespaces: i64,
    /// The id of its newest checkpoint, as callers see it.
    pub latest_id: String,
    /// That checkpoint's `checkpoint` column, as text.
    pub checkpoint: Option<String>,
    /// Its `metadata` column, as text.
    pub metadata: Option<String>,
    /// Its `parent_checkpoint_id`, as callers see it.
    pub parent_checkpoint_id: Option<String>,
}

/// The threads of a SQL saver's thread query, in the query's order, one entry per thread
/// (subgraph namespaces may share the newest id, giving a thread several rows); the latest
/// record is left out when a column is missing or not JSON.
pub fn threads_from_rows(rows: Vec<ThreadRow>) -> Vec<StoredThread> {
    let mut out: Vec<StoredThread> = Vec::with_capacity(rows.len());
    for row in rows {
        if out.iter().any(|t| t.thread_id == row.thread_id) {
            continue;
        }
        let json = |text: Option<String>| text.and_then(|t| parse_json(t.as_bytes()).ok());
        let latest_record = json(row.checkpoint).zip(json(row.metadata)).map(|(checkpoint, metadata)| {
            StoredRecord { checkpoint, metadata, parent_checkpoint_id: row.parent_checkpoint_id }
        });
        out.push(StoredThread {
            thread_id: row.thread_id,
            checkpoints: u64::try_from(row.checkpoints).unwrap_or(0),
            namespaces: u64::try_from(row.namespaces).unwrap_or(0),
            latest_id: row.latest_id,
            latest_record,
        });
    }
    out
}

/// The checkpoints of one namespace from the rows of LangGraph's three tables: `checkpoints`
/// in the order wanted, and all of the namespace's blobs and writes (writes in stored order).
/// A checkpoint's blobs are those its document's `channel_versions` point at. `shown` turns an
/// id, channel or task id as the table holds it into the text callers see (a saver that stores
/// some texts escaped unescapes them there).
pub fn from_tables(
    checkpoint_ns: &str,
    checkpoints: Vec<CheckpointRow>,
    blobs: Vec<BlobRow>,
    writes: &[WriteRow],
    shown: impl Fn(String) -> String,
) -> Vec<StoredCheckpoint> {
    let mut by_version: HashMap<(String, String), StoredValue> = HashMap::new();
    for row in blobs {
        let kind = row.kind.unwrap_or_else(|| "null".to_owned());
        by_version.insert(
            (row.channel, row.version),
            StoredValue::Typed { kind, payload: row.blob.unwrap_or_default() },
        );
    }
    let mut out = Vec::with_capacity(checkpoints.len());
    for row in checkpoints {
        let record = record_of(&row).map(|(checkpoint, metadata)| StoredRecord {
            checkpoint,
            metadata,
            parent_checkpoint_id: row.parent_checkpoint_id.clone().map(&shown),
        });
        let mut stored_blobs = Vec::new();
        let versions = record.as_ref().ok().and_then(|r| r.checkpoint.get("channel_versions"));
        for (channel, version) in versions.and_then(Json::as_object).into_iter().flatten() {
            let version = match version {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            match by_version.get(&(channel.clone(), version)) {
                Some(StoredValue::Typed { kind, .. }) if kind == EMPTY => {}
                Some(value) => stored_blobs.push((shown(channel.clone()), value.clone())),
                // Inline in the document, or a channel without a value.
                None => {}
            }
        }
        let stored_writes = writes_of(&row.checkpoint_id, writes, &shown);
        out.push(StoredCheckpoint {
            checkpoint_ns: checkpoint_ns.to_owned(),
            checkpoint_id: shown(row.checkpoint_id),
            record,
            blobs: stored_blobs,
            writes: stored_writes,
        });
    }
    out
}

/// The pending writes of checkpoint `checkpoint_id` among `writes`, in stored order.
fn writes_of(checkpoint_id: &str, writes: &[WriteRow], shown: impl Fn(String) -> String) -> Vec<StoredWrite> {
    writes
        .iter()
        .filter(|w| w.checkpoint_id.as_deref() == Some(checkpoint_id))
        .map(|w| StoredWrite {
            task_id: w.task_id.clone().map(&shown).unwrap_or_default(),
            idx: w.idx,
            channel: Some(w.channel.clone().map(&shown).unwrap_or_default()),
            value: StoredValue::Typed {
                kind: w.kind.clone().unwrap_or_else(|| "null".to_owned()),
                payload: w.blob.clone().unwrap_or_default(),
            },
        })
        .collect()
}

/// Both parts of a record, or what is wrong with either.
fn both<C, M>(checkpoint: Result<C, String>, metadata: Result<M, String>) -> Result<(C, M), String> {
    match (checkpoint, metadata) {
        (Ok(c), Ok(m)) => Ok((c, m)),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
        (Err(c), Err(m)) => Err(format!("{c}; {m}")),
    }
}

/// The document and metadata of a `checkpoints` row, or what is wrong with them.
fn record_of(row: &CheckpointRow) -> Result<(Json, Json), String> {
    both(json_column("checkpoint", &row.checkpoint), json_column("metadata", &row.metadata))
}

/// A JSON text column as JSON, or what is wrong with it.
fn json_column(column: &str, text: &Result<Option<String>, String>) -> Result<Json, String> {
    match text {
        Ok(Some(t)) => parse_json(t.as_bytes()).map_err(|e| format!("`{column}` is not JSON: {e}")),
        Ok(None) => Err(format!("`{column}` is NULL")),
        Err(e) => Err(format!("`{column}` cannot be read: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkpoint(id: &str, document: &str) -> CheckpointRow {
        CheckpointRow {
            checkpoint_id: id.into(),
            parent_checkpoint_id: None,
            checkpoint: Ok(Some(document.into())),
            metadata: Ok(Some(r#"{"step":1}"#.into())),
        }
    }

    fn blob(channel: &str, version: &str, kind: &str) -> BlobRow {
        BlobRow {
            channel: channel.into(),
            version: version.into(),
            kind: Some(kind.into()),
            blob: Some(vec![1]),
        }
    }

    #[test]
    fn blobs_are_those_the_document_points_at() {
        let doc = r#"{"channel_versions":{"a":"2","b":"1","c":3,"gone":"9"}}"#;
        let blobs = vec![
            blob("a", "1", "msgpack"),
            blob("a", "2", "msgpack"),
            blob("b", "1", EMPTY),
            blob("c", "3", "json"),
        ];
        let write = WriteRow { checkpoint_id: Some("x".into()), idx: -3, ..WriteRow::default() };
        let out = from_tables("", vec![checkpoint("x", doc)], blobs, &[write], |s| s.to_uppercase());
        let channels: Vec<&str> = out[0].blobs.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(channels, ["A", "C"], "the version asked for, no empty marker, no missing row");
        assert_eq!(out[0].checkpoint_id, "X");
        let w = &out[0].writes[0];
        assert_eq!((w.idx, w.channel.as_deref()), (-3, Some("")));
        assert_eq!(w.value, StoredValue::Typed { kind: "null".into(), payload: Vec::new() });
    }

    #[test]
    fn a_thread_is_listed_once_and_a_bad_record_left_out() {
        let row = |id: &str, metadata: &str| ThreadRow {
            thread_id: id.into(),
            checkpoints: 2,
            namespaces: -1,
            checkpoint: Some("{}".into()),
            metadata: Some(metadata.into()),
            ..ThreadRow::default()
        };
        let out = threads_from_rows(vec![row("a", r#"{"step":3}"#), row("a", "{}"), row("b", "{")]);
        let ids: Vec<&str> = out.iter().map(|t| t.thread_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!((out[0].checkpoints, out[0].namespaces), (2, 0));
        assert_eq!(out[0].latest_record.as_ref().unwrap().metadata["step"], 3);
        assert!(out[1].latest_record.is_none());
    }

    #[test]
    fn an_unreadable_column_is_the_record_s_problem() {
        let mut row = checkpoint("x", "{");
        row.metadata = Ok(None);
        let out = from_tables("ns", vec![row], Vec::new(), &[], |s| s);
        let problem = out[0].record.as_ref().unwrap_err();
        assert!(
            problem.starts_with("`checkpoint` is not JSON") && problem.ends_with("`metadata` is NULL"),
            "{problem}"
        );
        assert!(out[0].blobs.is_empty());
    }
}
