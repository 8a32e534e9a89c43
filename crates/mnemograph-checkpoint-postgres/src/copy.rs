//! `copy_thread`: every row of one thread, in all namespaces, copied by the server under another
//! thread id, in one transaction.

use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::PgPool;

use crate::error::backend;
use crate::text::escape;

/// Taken by the copy, and by no other statement, so that two copies onto one target take turns:
/// the second then finds the first's checkpoints and is refused.
const LOCK: &str = "SELECT pg_advisory_xact_lock(hashtext('checkpoint copy'), hashtext($1))";

const TARGET_USED: &str = "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1)";

const COPIES: [&str; 3] = [
    "INSERT INTO checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
    SELECT $2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
    FROM checkpoints WHERE thread_id = $1",
    "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT $2, checkpoint_ns, channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING",
    "INSERT INTO checkpoint_writes
        (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
    SELECT $2, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob
    FROM checkpoint_writes WHERE thread_id = $1
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING",
];

/// Copies `source` to `target`; refused when `target` has checkpoints.
pub(crate) async fn copy_thread(
    pool: &PgPool,
    source_id: &str,
    target_id: &str,
) -> Result<(), CheckpointError> {
    let (source, target) = (escape(source_id), escape(target_id));
    let mut tx = pool.begin().await.map_err(backend)?;
    sqlx::query(LOCK).bind(&*target).execute(&mut *tx).await.map_err(backend)?;
    let used: bool =
        sqlx::query_scalar(TARGET_USED).bind(&*target).fetch_one(&mut *tx).await.map_err(backend)?;
    if used {
        return Err(CheckpointError::Invalid(format!(
            "copy_thread: the target thread `{target_id}` already has checkpoints"
        )));
    }
    for copy in COPIES {
        sqlx::query(copy).bind(&*source).bind(&*target).execute(&mut *tx).await.map_err(backend)?;
    }
    tx.commit().await.map_err(backend)
}
