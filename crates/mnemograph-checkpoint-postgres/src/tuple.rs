//! A row of the read statement ([`select`](crate::select)) as a checkpoint tuple.

use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::serde::{checkpoint_from_json, loads_typed, parse_json};
use mnemograph_checkpoint::checkpoint::{
    CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple, PendingWrite,
};
use mnemograph_checkpoint::value::ChannelValue;
use serde_json::Value;
use sqlx::postgres::PgRow;
use sqlx::Row as _;

use crate::error::backend;
use crate::text::{unescape, unescape_json, MARK};

/// Reads one row; a malformed one gives [`CheckpointError::Corrupt`] naming its checkpoint.
pub(crate) fn from_row(row: &PgRow) -> Result<CheckpointTuple, CheckpointError> {
    let text = |column: &str| row.try_get::<String, _>(column).map(unescape).map_err(backend);
    let thread_id = text("thread_id")?;
    let checkpoint_ns = text("checkpoint_ns")?;
    let checkpoint_id = text("checkpoint_id")?;
    let parent_id = row.try_get::<Option<String>, _>("parent_checkpoint_id").map_err(backend)?.map(unescape);
    let corrupt = |what: String| {
        CheckpointError::Corrupt(format!("checkpoint {checkpoint_id} of thread `{thread_id}`: {what}"))
    };

    let document = json(row, "checkpoint").map_err(&corrupt)?;
    let metadata = json(row, "metadata").map_err(&corrupt)?;
    let metadata = CheckpointMetadata::from_json(&metadata).map_err(|e| corrupt(e.to_string()))?;

    let channels = array::<String>(row, "channels")?;
    let kinds = array::<String>(row, "types")?;
    let bytes = array::<Option<Vec<u8>>>(row, "blobs")?;
    let mut blobs: Vec<(Arc<str>, ChannelValue)> = Vec::with_capacity(channels.len());
    for ((channel, kind), bytes) in channels.into_iter().zip(kinds).zip(bytes) {
        // An `empty` type or a NULL blob is LangGraph's "no value".
        let Some(bytes) = bytes.filter(|_| kind != "empty") else { continue };
        let value = loads_typed(&kind, &bytes).map_err(|e| corrupt(format!("channel `{channel}`: {e}")))?;
        blobs.push((unescape(channel).into(), value));
    }
    let checkpoint = checkpoint_from_json(&document, blobs).map_err(|e| corrupt(e.to_string()))?;

    let pending_writes = pending_writes(row, &corrupt)?;

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
        pending_writes,
    })
}

/// The pending writes aggregated into a row (`task_ids`, `write_channels`, `write_types`,
/// `write_blobs`); `corrupt` names the checkpoint in the error of a write that does not decode.
pub(crate) fn pending_writes(
    row: &PgRow,
    corrupt: &dyn Fn(String) -> CheckpointError,
) -> Result<Vec<PendingWrite>, CheckpointError> {
    let task_ids = array::<String>(row, "task_ids")?;
    let write_channels = array::<String>(row, "write_channels")?;
    let write_kinds = array::<Option<String>>(row, "write_types")?;
    let write_bytes = array::<Vec<u8>>(row, "write_blobs")?;
    let mut pending_writes = Vec::with_capacity(task_ids.len());
    for (((task_id, channel), kind), bytes) in
        task_ids.into_iter().zip(write_channels).zip(write_kinds).zip(write_bytes)
    {
        let kind = kind.as_deref().unwrap_or("null");
        let value = loads_typed(kind, &bytes).map_err(|e| corrupt(format!("write to `{channel}`: {e}")))?;
        pending_writes.push(PendingWrite { task_id: unescape(task_id), channel: unescape(channel), value });
    }
    Ok(pending_writes)
}

/// A JSONB column read as text.
fn json(row: &PgRow, column: &str) -> Result<Value, String> {
    let text: String = row.try_get(column).map_err(|e| format!("`{column}`: {e}"))?;
    // Floats correctly rounded, as Python reads them.
    let value = parse_json(text.as_bytes()).map_err(|e| format!("`{column}` is not JSON: {e}"))?;
    // Only this saver writes escaped texts, and rarely: most documents have none to undo.
    Ok(if text.contains(MARK) { unescape_json(value) } else { value })
}

/// An aggregated column; NULL (nothing joined) is empty.
fn array<T>(row: &PgRow, column: &str) -> Result<Vec<T>, CheckpointError>
where
    T: for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
    Vec<T>: for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
{
    Ok(row.try_get::<Option<Vec<T>>, _>(column).map_err(backend)?.unwrap_or_default())
}
