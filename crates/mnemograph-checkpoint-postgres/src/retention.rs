//! `prune`: LangGraph's retention of whole threads.
//!
//! `KeepLatest` keeps, in every namespace of each thread, the latest checkpoint (the one
//! `get_tuple` reads) with its pending writes, deletes the other checkpoints and their writes,
//! forgets a kept checkpoint's parent when that was deleted (as LangGraph's saver does), and
//! deletes the blobs no remaining checkpoint names. `Delete` removes the threads. Either is one
//! transaction for all the threads, on one snapshot (repeatable read), so a checkpoint stored
//! meanwhile is neither seen nor deleted.

use mnemograph_checkpoint::checkpoint::{CheckpointError, PruneStrategy};
use sqlx::PgPool;

use crate::error::backend;
use crate::text::escape;

const SNAPSHOT: &str = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ";

const DELETE_THREADS: [&str; 3] = [
    "DELETE FROM checkpoints WHERE thread_id = ANY($1)",
    "DELETE FROM checkpoint_blobs WHERE thread_id = ANY($1)",
    "DELETE FROM checkpoint_writes WHERE thread_id = ANY($1)",
];

/// The older checkpoints and their writes; the kept ones whose parent went lose it.
const KEEP_LATEST: &str = "WITH latest AS (
    SELECT DISTINCT ON (thread_id, checkpoint_ns) thread_id, checkpoint_ns, checkpoint_id
    FROM checkpoints WHERE thread_id = ANY($1)
    ORDER BY thread_id, checkpoint_ns, checkpoint_id DESC
), deleted AS (
    DELETE FROM checkpoints c WHERE c.thread_id = ANY($1) AND NOT EXISTS (
        SELECT 1 FROM latest l WHERE l.thread_id = c.thread_id
            AND l.checkpoint_ns = c.checkpoint_ns AND l.checkpoint_id = c.checkpoint_id)
    RETURNING c.thread_id, c.checkpoint_ns, c.checkpoint_id
), writes AS (
    DELETE FROM checkpoint_writes w USING deleted d
    WHERE w.thread_id = d.thread_id AND w.checkpoint_ns = d.checkpoint_ns
        AND w.checkpoint_id = d.checkpoint_id
)
UPDATE checkpoints c SET parent_checkpoint_id = NULL
FROM latest l, deleted d
WHERE c.thread_id = l.thread_id AND c.checkpoint_ns = l.checkpoint_ns AND c.checkpoint_id = l.checkpoint_id
    AND d.thread_id = c.thread_id AND d.checkpoint_ns = c.checkpoint_ns
    AND d.checkpoint_id = c.parent_checkpoint_id";

/// Blobs of the threads that no remaining checkpoint names (run after [`KEEP_LATEST`], in its
/// transaction, so the deleted checkpoints are gone).
const UNUSED_BLOBS: &str = "DELETE FROM checkpoint_blobs b WHERE b.thread_id = ANY($1) AND NOT EXISTS (
    SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
        AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)";

/// Prunes `thread_ids` with `strategy`.
pub(crate) async fn prune(
    pool: &PgPool,
    thread_ids: &[String],
    strategy: PruneStrategy,
) -> Result<(), CheckpointError> {
    if thread_ids.is_empty() {
        return Ok(());
    }
    let threads: Vec<String> = thread_ids.iter().map(|t| escape(t).into_owned()).collect();
    let mut tx = pool.begin().await.map_err(backend)?;
    sqlx::query(SNAPSHOT).execute(&mut *tx).await.map_err(backend)?;
    let statements: &[&str] = match strategy {
        PruneStrategy::Delete => &DELETE_THREADS,
        PruneStrategy::KeepLatest => &[KEEP_LATEST, UNUSED_BLOBS],
    };
    for sql in statements {
        sqlx::query(sql).bind(&threads).execute(&mut *tx).await.map_err(backend)?;
    }
    tx.commit().await.map_err(backend)
}
