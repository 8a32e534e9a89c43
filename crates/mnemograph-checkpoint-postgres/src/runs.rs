//! `delete_for_runs`: the checkpoints whose metadata names one of the runs, with their pending
//! writes, in one statement.
//!
//! Blobs stay: a blob is shared by every checkpoint whose channel kept that version, and a
//! checkpoint of another run being written now may name one; an orphaned blob costs only space,
//! and `prune` removes it.

use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::PgPool;

use crate::error::backend;
use crate::text::escape;

const DELETE: &str = "WITH deleted AS (
    DELETE FROM checkpoints WHERE metadata ->> 'run_id' = ANY($1)
    RETURNING thread_id, checkpoint_ns, checkpoint_id
)
DELETE FROM checkpoint_writes w USING deleted d
WHERE w.thread_id = d.thread_id AND w.checkpoint_ns = d.checkpoint_ns AND w.checkpoint_id = d.checkpoint_id";

/// Deletes the checkpoints of `run_ids` and their writes.
pub(crate) async fn delete_for_runs(pool: &PgPool, run_ids: &[String]) -> Result<(), CheckpointError> {
    if run_ids.is_empty() {
        return Ok(());
    }
    // Metadata strings are stored in the same form as every other text.
    let runs: Vec<String> = run_ids.iter().map(|r| escape(r).into_owned()).collect();
    sqlx::query(DELETE).bind(&runs).execute(pool).await.map_err(backend)?;
    Ok(())
}
