//! The rows of a shallow-layout put (the namespace's one checkpoint row, its blobs, one per
//! channel) and the statements that store them inside the put transaction.

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError};
use sqlx::MySqlConnection;

use super::batches::{batches, MAX_PLACEHOLDERS};
use super::tx::Tx;
use crate::error::backend;
use crate::exact::same;
use crate::sql;

/// Drops writes of checkpoints that are neither the new one nor its parent. The thread id is
/// compared exactly (see [`crate::exact`]), so bound twice.
const DELETE_OLD_WRITES: &str = concat!(
    "DELETE FROM checkpoint_writes WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND checkpoint_id NOT IN (?, ?)"
);

/// The thread ids stored in the namespace's row under the column's collation, locked. The
/// primary key is `(thread_id, checkpoint_ns_hash)` in the database's collation, so a row of
/// `User-1` is also the row of `user-1` and `user-1 `: the upserts would overwrite that other
/// thread's checkpoint and blobs.
const SAME_KEY: &str = "SELECT thread_id FROM checkpoints \
    WHERE thread_id = ? AND checkpoint_ns_hash = ? FOR UPDATE";

/// One row per channel: the latest value replaces the previous one.
const UPSERT_BLOBS: &str = "INSERT INTO checkpoint_blobs \
    (thread_id, checkpoint_ns, checkpoint_ns_hash, channel, type, `blob`) VALUES ";
const UPSERT_BLOBS_TAIL: &str = " /*!50700 AS new*/ ON DUPLICATE KEY UPDATE \
    type = /*!50700 new.type*//*M! VALUE(type)*/, \
    `blob` = /*!50700 new.`blob`*//*M! VALUE(`blob`)*/";

/// The thread's one checkpoint row (no id column: the id is the document's `$.id`).
const UPSERT_CHECKPOINT: &str = "INSERT INTO checkpoints \
    (thread_id, checkpoint_ns, checkpoint_ns_hash, checkpoint, metadata) \
    VALUES (?, ?, ?, ?, ?) /*!50700 AS new*/ \
    ON DUPLICATE KEY UPDATE \
    checkpoint = /*!50700 new.checkpoint*//*M! VALUE(checkpoint)*/, \
    metadata = /*!50700 new.metadata*//*M! VALUE(metadata)*/";

/// What one shallow put stores, encoded and checked.
pub(crate) struct ShallowRows<'a> {
    /// Thread, namespace and parent.
    pub(crate) config: &'a CheckpointConfig,
    /// `checkpoint_ns_hash`.
    pub(crate) hash: [u8; 16],
    /// The checkpoint's id.
    pub(crate) checkpoint_id: &'a str,
    /// `(channel, type, blob)` of each channel whose version is new; no blob for a channel
    /// without a value.
    pub(crate) blobs: Vec<(&'a str, String, Option<Vec<u8>>)>,
    /// The checkpoint document, as Python's JSON, without channel values.
    pub(crate) document: String,
    /// The metadata, as Python's JSON.
    pub(crate) metadata: String,
}

/// Stores `rows` on `tx`: the older checkpoints' pending writes go, the blobs and the checkpoint
/// row are upserted.
pub(crate) async fn write(tx: &mut Tx, rows: &ShallowRows<'_>) -> Result<(), CheckpointError> {
    let ShallowRows { config, hash, checkpoint_id, blobs, document, metadata } = rows;
    // Prepared statements, one round trip each: the shallow saver keeps its
    // statement-by-statement transaction.
    let tx = tx.connection().await.map_err(backend)?;
    refuse_colliding_thread(tx, config, hash).await?;
    sqlx::query(DELETE_OLD_WRITES)
        .bind(&config.thread_id)
        .bind(&config.thread_id)
        .bind(&hash[..])
        .bind(*checkpoint_id)
        .bind(config.checkpoint_id.as_deref().unwrap_or(""))
        .execute(&mut *tx)
        .await
        .map_err(backend)?;
    upsert_blobs(tx, config, hash, blobs).await.map_err(backend)?;
    sqlx::query(UPSERT_CHECKPOINT)
        .bind(&config.thread_id)
        .bind(&config.checkpoint_ns)
        .bind(&hash[..])
        .bind(document.as_str())
        .bind(metadata.as_str())
        .execute(&mut *tx)
        .await
        .map_err(backend)?;
    Ok(())
}

/// `Err(Invalid)` when the namespace's row belongs to a thread whose id differs from
/// `config.thread_id` but is equal to it under the column's collation (see [`SAME_KEY`]).
async fn refuse_colliding_thread(
    tx: &mut MySqlConnection,
    config: &CheckpointConfig,
    hash: &[u8; 16],
) -> Result<(), CheckpointError> {
    let stored: Vec<String> = sqlx::query_scalar(SAME_KEY)
        .bind(&config.thread_id)
        .bind(&hash[..])
        .fetch_all(&mut *tx)
        .await
        .map_err(backend)?;
    match stored.into_iter().find(|other| *other != config.thread_id) {
        Some(other) => Err(CheckpointError::Invalid(format!(
            "thread id `{}` cannot be stored next to the thread `{other}`: the database's collation \
             does not tell them apart, and the shallow tables key a checkpoint by thread id",
            config.thread_id
        ))),
        None => Ok(()),
    }
}

/// `(channel, type, blob)` rows, upserted in as few statements as fit.
async fn upsert_blobs(
    tx: &mut MySqlConnection,
    config: &CheckpointConfig,
    hash: &[u8; 16],
    blobs: &[(&str, String, Option<Vec<u8>>)],
) -> Result<(), sqlx::Error> {
    let size = |b: &(&str, String, Option<Vec<u8>>)| b.2.as_ref().map_or(0, Vec::len);
    for batch in batches(blobs, size, MAX_PLACEHOLDERS / 6) {
        let text = sql::multi_row(UPSERT_BLOBS, "(?, ?, ?, ?, ?, ?)", batch.len(), UPSERT_BLOBS_TAIL);
        let mut query = sqlx::query(&text);
        for (channel, kind, bytes) in batch {
            query = query
                .bind(&config.thread_id)
                .bind(&config.checkpoint_ns)
                .bind(&hash[..])
                .bind(*channel)
                .bind(kind)
                .bind(bytes.as_deref());
        }
        query.execute(&mut *tx).await?;
    }
    Ok(())
}
