//! `copy_thread`: the rows of one thread copied under another id by SQLite itself, in one
//! transaction.

use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::SqlitePool;

use crate::error::backend;

/// Copies every checkpoint and pending write of `source` to `target`, ids, parents and bytes
/// unchanged. A target with checkpoints is refused, and nothing is written.
pub(crate) async fn copy_thread(
    pool: &SqlitePool,
    source: &str,
    target: &str,
) -> Result<(), CheckpointError> {
    let failed = backend("copy_thread");
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(&failed)?;
    let taken: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?)")
        .bind(target)
        .fetch_one(&mut *tx)
        .await
        .map_err(&failed)?;
    if taken {
        return Err(CheckpointError::Invalid(format!(
            "copy_thread: thread `{target}` already has checkpoints; copy into an empty thread"
        )));
    }
    sqlx::query(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
         checkpoint, metadata) SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
         checkpoint, metadata FROM checkpoints WHERE thread_id = ?",
    )
    .bind(target)
    .bind(source)
    .execute(&mut *tx)
    .await
    .map_err(&failed)?;
    sqlx::query(
        "INSERT OR REPLACE INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, \
         channel, type, value) SELECT ?, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, \
         type, value FROM writes WHERE thread_id = ?",
    )
    .bind(target)
    .bind(source)
    .execute(&mut *tx)
    .await
    .map_err(&failed)?;
    tx.commit().await.map_err(&failed)
}
