//! Blobs and pending writes that the read statement's aggregates could not carry, fetched as
//! plain rows.
//!
//! The read statement ([`sql::select`]) returns the values of a checkpoint base64-encoded
//! inside one JSON string per row, and the server builds no string longer than
//! `max_allowed_packet`: a value of a few MiB fits in the table (it was inserted in one packet)
//! but not in that string. [`rows`](crate::rows) notices an incomplete aggregate and calls these
//! functions, which select the same rows as raw columns, each row in a packet of its own. This
//! is the rare path: one or two more statements for a checkpoint holding large values.

use mnemograph_checkpoint::checkpoint::serde::loads_typed;
use mnemograph_checkpoint::checkpoint::{CheckpointError, PendingWrite};
use serde_json::Value;
use sqlx::mysql::MySqlRow;
use sqlx::{MySqlPool, Row as _};

use crate::error::backend;
use crate::exact::same;
use crate::keys::ns_hash;
use crate::read_io::ReadIo;
use crate::rows::{RawBlob, RawTuple};
use crate::sql::{self, Layout};

/// A stored value: channel, type tag and bytes (`None`: a NULL blob).
pub(crate) type Blob = (String, String, Option<Vec<u8>>);

/// A stored pending write: task id, channel, type tag, bytes and index.
pub(crate) type Write = (String, String, String, Vec<u8>, i64);

/// The blob rows of one namespace; the channel list follows.
const BLOBS: &str =
    concat!("FROM checkpoint_blobs WHERE ", same!("thread_id"), " AND checkpoint_ns_hash = ? AND ");

/// Every pending write of one checkpoint.
const WRITES: &str = concat!(
    "SELECT task_id, channel, type, `blob`, idx FROM checkpoint_writes WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND ",
    same!("checkpoint_id")
);

/// The blobs `document` (a checkpoint document as stored) refers to: for each channel of its
/// `channel_versions`, the row of that version (the shallow layout keeps one row per channel).
/// Channels without a row are left out, as in the aggregate.
pub(crate) async fn blobs(
    pool: &MySqlPool,
    layout: Layout,
    thread_id: &str,
    checkpoint_ns: &str,
    document: &Value,
    io: &mut ReadIo,
) -> Result<Vec<Blob>, CheckpointError> {
    let versions = document.get("channel_versions").and_then(Value::as_object);
    // A version as the read statement's JSON_TABLE turns it into text: strings unquoted, numbers
    // as written.
    let wanted: Vec<(&str, String)> = versions
        .into_iter()
        .flatten()
        .map(|(channel, v)| (channel.as_str(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .collect();
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let hash = ns_hash(checkpoint_ns);
    let (row, select) = match layout {
        Layout::Full => ("(?, ?)", "SELECT channel, version, type, `blob` {BLOBS} (channel, version) IN ("),
        Layout::Shallow => ("?", "SELECT channel, type, `blob` {BLOBS} channel IN ("),
    };
    let select = select.replace("{BLOBS}", BLOBS);
    let mut found = Vec::with_capacity(wanted.len());
    // Bounded batches keep each statement far below the server's placeholder limit.
    for batch in wanted.chunks(1000) {
        let text = sql::multi_row(&select, row, batch.len(), ")");
        let mut query = sqlx::query(&text).bind(thread_id).bind(thread_id).bind(&hash[..]);
        for (channel, version) in batch {
            query = query.bind(*channel);
            if layout == Layout::Full {
                query = query.bind(version.as_str());
            }
        }
        io.statement();
        for r in query.fetch_all(pool).await.map_err(backend)? {
            let channel = string(&r, "channel")?;
            let version = if layout == Layout::Full { Some(string(&r, "version")?) } else { None };
            // `IN` compares under the columns' collation; keep the exact matches only.
            let exact = batch
                .iter()
                .any(|(c, v)| *c == channel && version.as_ref().is_none_or(|version| version == v));
            if exact {
                let blob = r.try_get::<Option<Vec<u8>>, _>("blob").map_err(backend)?;
                io.received(blob.as_ref().map_or(0, Vec::len));
                found.push((channel, string(&r, "type")?, blob));
            }
        }
    }
    Ok(found)
}

/// Every pending write of checkpoint `checkpoint_id`.
pub(crate) async fn writes(
    pool: &MySqlPool,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    io: &mut ReadIo,
) -> Result<Vec<Write>, CheckpointError> {
    let hash = ns_hash(checkpoint_ns);
    io.statement();
    let rows = sqlx::query(WRITES)
        .bind(thread_id)
        .bind(thread_id)
        .bind(&hash[..])
        .bind(checkpoint_id)
        .bind(checkpoint_id)
        .fetch_all(pool)
        .await
        .map_err(backend)?;
    let found: Vec<Write> = rows
        .iter()
        .map(|r| {
            let kind = r.try_get_unchecked::<Option<String>, _>("type").map_err(backend)?;
            Ok((
                string(r, "task_id")?,
                string(r, "channel")?,
                kind.unwrap_or_else(|| "null".to_owned()),
                r.try_get::<Vec<u8>, _>("blob").map_err(backend)?,
                r.try_get::<i64, _>("idx").map_err(backend)?,
            ))
        })
        .collect::<Result<_, CheckpointError>>()?;
    io.received(found.iter().map(|w| w.3.len()).sum());
    Ok(found)
}

/// A text column (`try_get_unchecked`: the server may type a `_bin` column as binary).
fn string(row: &MySqlRow, column: &str) -> Result<String, CheckpointError> {
    row.try_get_unchecked::<String, _>(column).map_err(backend)
}

impl RawTuple {
    /// Replaces the blobs, or the pending writes, that the read statement's aggregates did not
    /// carry whole with the rows fetched on their own; nothing to do when they were complete.
    pub(crate) async fn fetch_oversized(
        &mut self,
        pool: &MySqlPool,
        layout: Layout,
    ) -> Result<(), CheckpointError> {
        if self.blobs_incomplete {
            let (thread, ns) = (&self.thread_id, &self.checkpoint_ns);
            let found = blobs(pool, layout, thread, ns, &self.document, &mut self.io).await?;
            // As in the aggregate: an `empty` or NULL blob means "no value".
            self.blobs = found
                .into_iter()
                .filter_map(|(channel, kind, bytes)| {
                    Some(RawBlob { channel, bytes: bytes?, kind }).filter(|b| b.kind != "empty")
                })
                .collect();
            self.blobs_incomplete = false;
        }
        if self.writes_incomplete {
            let (thread, ns, id) = (&self.thread_id, &self.checkpoint_ns, &self.checkpoint_id);
            let found = writes(pool, thread, ns, id, &mut self.io).await?;
            let mut pending = Vec::with_capacity(found.len());
            for (task_id, channel, kind, bytes, idx) in found {
                let value = loads_typed(&kind, &bytes)
                    .map_err(|e| self.corrupt(format!("write to `{channel}`: {e}")))?;
                pending.push((idx, PendingWrite { task_id, channel, value }));
            }
            self.writes = pending;
            self.writes_incomplete = false;
        }
        Ok(())
    }
}
