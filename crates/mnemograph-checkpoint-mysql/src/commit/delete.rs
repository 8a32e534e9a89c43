//! Deleting a thread.

use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::{MySql, MySqlPool, Transaction};

use crate::error::backend;
use crate::exact::same;

/// `delete_thread` of both savers: every row of the thread in the three tables, in one
/// transaction.
pub(crate) async fn delete_thread(pool: &MySqlPool, thread_id: &str) -> Result<(), CheckpointError> {
    let mut tx = pool.begin().await.map_err(backend)?;
    delete_rows(&mut tx, thread_id).await.map_err(backend)?;
    tx.commit().await.map_err(backend)
}

/// Deletes every row of `thread_id` in the three tables (either layout) inside `tx`.
pub(crate) async fn delete_rows(tx: &mut Transaction<'_, MySql>, thread_id: &str) -> Result<(), sqlx::Error> {
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        // Exactly this thread (see `exact`), not the ones its collation confuses with it.
        sqlx::query(&format!("DELETE FROM {table} WHERE {}", same!("thread_id")))
            .bind(thread_id)
            .bind(thread_id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
