//! Keeping the newest checkpoints of a thread: [`MySqlCheckpointer::prune`] and the
//! [`prune`](mnemograph_checkpoint::checkpoint::Checkpointer::prune) of the full saver.
//!
//! [`MySqlCheckpointer::prune`]: crate::MySqlCheckpointer::prune

use mnemograph_checkpoint::checkpoint::{CheckpointError, PruneStrategy};
use sqlx::{MySql, MySqlPool, Transaction};

use crate::commit::delete::delete_rows;
use crate::delta;
use crate::error::backend;
use crate::exact::{same, same_columns};

/// LangGraph's `prune` on the full tables: every thread of `thread_ids` in one transaction.
pub(crate) async fn prune(
    pool: &MySqlPool,
    thread_ids: &[String],
    strategy: PruneStrategy,
) -> Result<(), CheckpointError> {
    if thread_ids.is_empty() {
        return Ok(());
    }
    let mut tx = pool.begin().await.map_err(backend)?;
    for thread_id in thread_ids {
        match strategy {
            PruneStrategy::KeepLatest => keep_last(&mut tx, thread_id, 1).await.map(drop),
            PruneStrategy::Delete => delete_rows(&mut tx, thread_id).await,
        }
        .map_err(backend)?;
    }
    tx.commit().await.map_err(backend)
}

/// Keeps the `keep_last` newest checkpoints of each namespace of `thread_id` inside `tx`, and
/// removes the older ones, the writes whose checkpoint is gone, and the blobs no remaining
/// checkpoint (or delta chain of one) needs. Returns how many checkpoints went.
pub(crate) async fn keep_last(
    tx: &mut Transaction<'_, MySql>,
    thread_id: &str,
    keep_last: usize,
) -> Result<u64, sqlx::Error> {
    let namespaces: Vec<Vec<u8>> =
        sqlx::query_scalar(PRUNE_NAMESPACES).bind(thread_id).bind(thread_id).fetch_all(&mut **tx).await?;
    let mut removed = 0;
    for hash in namespaces {
        // The newest checkpoint to remove; it and everything older go.
        let cutoff: Option<String> = sqlx::query_scalar(PRUNE_CUTOFF)
            .bind(thread_id)
            .bind(thread_id)
            .bind(&hash)
            .bind(keep_last as u64)
            .fetch_optional(&mut **tx)
            .await?;
        let Some(cutoff) = cutoff else { continue };
        removed += sqlx::query(PRUNE_CHECKPOINTS)
            .bind(thread_id)
            .bind(thread_id)
            .bind(&hash)
            .bind(&cutoff)
            .execute(&mut **tx)
            .await?
            .rows_affected();
        sqlx::query(PRUNE_WRITES).bind(thread_id).bind(thread_id).bind(&hash).execute(&mut **tx).await?;
        delta::prune_blobs(tx, thread_id, &hash, PRUNE_BLOBS).await?;
    }
    Ok(removed)
}

// Thread ids are compared exactly (see `exact`): the columns' collation would make `User-1`
// and `user-1 ` the same thread. Each such comparison binds the id twice.

/// The namespaces of a thread.
const PRUNE_NAMESPACES: &str =
    concat!("SELECT DISTINCT checkpoint_ns_hash FROM checkpoints WHERE ", same!("thread_id"));

/// The newest checkpoint of a namespace to remove: it and everything older go.
const PRUNE_CUTOFF: &str = concat!(
    "SELECT checkpoint_id FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?"
);

/// The checkpoints of a namespace up to the cutoff.
const PRUNE_CHECKPOINTS: &str = concat!(
    "DELETE FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND checkpoint_id <= ?"
);

/// Writes of the namespace whose checkpoint is gone.
const PRUNE_WRITES: &str = concat!(
    "DELETE FROM checkpoint_writes WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? \
    AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE ",
    same_columns!("c.thread_id", "checkpoint_writes.thread_id"),
    " AND c.checkpoint_ns_hash = checkpoint_writes.checkpoint_ns_hash \
        AND ",
    same_columns!("c.checkpoint_id", "checkpoint_writes.checkpoint_id"),
    ")"
);

/// Blobs of the namespace that no remaining checkpoint's `channel_versions` points at.
/// `JSON_CONTAINS` with a one-key object matches any channel name, quotes and dots included.
pub(crate) const PRUNE_BLOBS: &str = concat!(
    "DELETE FROM checkpoint_blobs WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? \
    AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE ",
    same_columns!("c.thread_id", "checkpoint_blobs.thread_id"),
    " AND c.checkpoint_ns_hash = checkpoint_blobs.checkpoint_ns_hash \
        AND JSON_CONTAINS(c.checkpoint, JSON_OBJECT(checkpoint_blobs.channel, checkpoint_blobs.version), \
            '$.channel_versions'))"
);
