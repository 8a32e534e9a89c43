//! The rows of a full-layout put (blobs, pending writes, delta rows, checkpoint rows) and the
//! statements that store them inside the put transaction.

use std::borrow::Cow;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError};

use super::batches::{batches, MAX_PLACEHOLDERS};
use super::blobs::{blob_statements, Blob};
use super::pending_writes::{insert_writes, TaskWrites};
use super::tx::Tx;
use crate::delta::{self, Planned, Stored};
use crate::error::backend;
use crate::sql;
use crate::statement::{Bind, Statement};

/// Stores every link's rows on `tx`; returns what delta mode stored for each link.
///
/// By kind of row rather than link by link, so that a chain costs a few statements whatever its
/// length: the plain blobs of all links in one multi-row statement, every link's pending writes
/// (each against its own parent), the delta rows link by link (a delta may extend a value an
/// earlier link stored), then all checkpoint rows in one statement. The statements are queued
/// on `tx` and sent with its `COMMIT`, in one round trip; only large ones (a long conversation's
/// messages) and delta rows, whose outcome decides what is remembered, are sent as they come.
pub(crate) async fn write_all(
    tx: &mut Tx,
    all: &[Rows<'_>],
) -> Result<Vec<Vec<Option<Stored>>>, CheckpointError> {
    let Some(first) = all.first() else { return Ok(Vec::new()) };
    // The blobs first: they are the statements large enough to run prepared, and whatever is
    // queued before one is sent ahead of it in a round trip of its own (on a kept connection,
    // autocommit off, a large one runs before the queued parent check instead, which then goes
    // with the COMMIT; nothing the check reads is written by them). The links of a chain are
    // one thread and namespace (each the child of the one before), so the blob rows share their
    // address columns.
    let blobs: Vec<&Blob<'_>> = all.iter().flat_map(|rows| &rows.blobs).collect();
    for statement in blob_statements(first.config, &first.hash, &blobs) {
        tx.execute_unordered(&statement).await.map_err(backend)?;
    }
    for rows in all {
        if let Some(writes) = &rows.writes {
            insert_writes(tx, rows.config, writes).await.map_err(backend)?;
        }
    }
    let mut stored = Vec::with_capacity(all.len());
    for rows in all {
        if rows.planned.is_empty() {
            stored.push(Vec::new());
            continue;
        }
        let conn = tx.connection().await.map_err(backend)?;
        stored.push(delta::insert(conn, rows.config, &rows.hash, &rows.planned).await.map_err(backend)?);
    }
    let size = |rows: &Rows<'_>| rows.document.len() + rows.metadata.len();
    for batch in batches(all, size, MAX_PLACEHOLDERS / 7) {
        let text = sql::multi_row(
            sql::UPSERT_CHECKPOINTS,
            sql::CHECKPOINT_ROW,
            batch.len(),
            sql::UPSERT_CHECKPOINTS_TAIL,
        );
        tx.execute(&upsert_checkpoints(text, batch)).await.map_err(backend)?;
    }
    Ok(stored)
}

/// `text` (an upsert of `batch.len()` checkpoint rows) with the rows of `batch` bound.
fn upsert_checkpoints<'q>(text: impl Into<Cow<'q, str>>, batch: &'q [Rows<'q>]) -> Statement<'q> {
    let mut statement = Statement::with_capacity(text, 7 * batch.len());
    for rows in batch {
        statement
            .push(Bind::Text(&rows.config.thread_id))
            .push(Bind::Text(&rows.config.checkpoint_ns))
            .push(Bind::Hash(rows.hash))
            .push(Bind::Text(rows.checkpoint_id))
            .push(Bind::OptText(rows.config.checkpoint_id.as_deref()))
            .push(Bind::Text(&rows.document))
            .push(Bind::Text(&rows.metadata));
    }
    statement
}

/// What one put stores, encoded and checked: its blob rows (or deltas) and its checkpoint row.
pub(crate) struct Rows<'a> {
    /// Thread, namespace and parent.
    pub(crate) config: &'a CheckpointConfig,
    /// `checkpoint_ns_hash`.
    pub(crate) hash: [u8; 16],
    /// The checkpoint's id.
    pub(crate) checkpoint_id: &'a str,
    /// Pending writes against the parent, stored first (a commit).
    pub(crate) writes: Option<TaskWrites<'a>>,
    /// Values whose version is new, stored in full.
    pub(crate) blobs: Vec<Blob<'a>>,
    /// Values of delta channels, stored as deltas or snapshots.
    pub(crate) planned: Vec<Planned<'a>>,
    /// The checkpoint document, as Python's JSON.
    pub(crate) document: String,
    /// The metadata, as Python's JSON.
    pub(crate) metadata: String,
}

impl<'a> Rows<'a> {
    /// The statement that upserts the checkpoint row.
    pub(crate) fn upsert(&'a self) -> Statement<'a> {
        upsert_checkpoints(sql::UPSERT_CHECKPOINT, std::slice::from_ref(self))
    }
}
