//! `delete_thread`: every row of a thread, in all namespaces, in one transaction.

use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::PgPool;

use crate::error::backend;
use crate::text::escape;

/// Deletes the thread's checkpoints, blobs and writes.
pub(crate) async fn delete_thread(pool: &PgPool, thread_id: &str) -> Result<(), CheckpointError> {
    let mut tx = pool.begin().await.map_err(backend)?;
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        sqlx::query(&format!("DELETE FROM {table} WHERE thread_id = $1"))
            .bind(escape(thread_id))
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
    }
    tx.commit().await.map_err(backend)
}
