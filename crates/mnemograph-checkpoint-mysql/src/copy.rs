//! `copy_thread` of both savers: every row of the source thread in the three tables, copied
//! under the target's id in one transaction, the checkpoint ids kept.
//!
//! Rows are copied by the server (`INSERT … SELECT`), so no value travels to the client. Delta
//! rows refer to versions of their own channel in their own namespace and thread, which the copy
//! carries whole, so a copied delta chain reads back as the original does.
//!
//! Copies to new ids that sort next to each other (a server's UUIDv7s) lock the same gap, and
//! InnoDB breaks the deadlock of their inserts by rolling one back: that copy did nothing, and
//! runs again.

use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::MySqlPool;

use crate::commit::retry::{backoff, is_deadlock, DEADLOCK_ATTEMPTS};
use crate::error::backend;
use crate::exact::same;
use crate::sql::Layout;

/// Whether the target has a checkpoint, compared under the column's collation: a thread that
/// collation confuses with the target shares its keys, so copying the same ids next to it would
/// collide. Locks the range, so no checkpoint lands there before the copy commits.
const TARGET_TAKEN: &str = "SELECT 1 FROM checkpoints WHERE thread_id = ? LIMIT 1 FOR UPDATE";

/// The copy statements of a layout: the target id is bound first, then the source id twice.
fn statements(layout: Layout) -> [String; 3] {
    let copy = |table: &str, columns: &str| {
        format!(
            "INSERT INTO {table} (thread_id, {columns}) SELECT ?, {columns} FROM {table} WHERE {}",
            same!("thread_id")
        )
    };
    let checkpoints = match layout {
        Layout::Full => {
            "checkpoint_ns, checkpoint_ns_hash, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
        }
        Layout::Shallow => "checkpoint_ns, checkpoint_ns_hash, type, checkpoint, metadata",
    };
    let blobs = match layout {
        Layout::Full => "checkpoint_ns, checkpoint_ns_hash, channel, version, type, `blob`",
        Layout::Shallow => "checkpoint_ns, checkpoint_ns_hash, channel, type, `blob`",
    };
    let writes =
        "checkpoint_ns, checkpoint_ns_hash, checkpoint_id, task_id, task_path, idx, channel, type, `blob`";
    [copy("checkpoints", checkpoints), copy("checkpoint_blobs", blobs), copy("checkpoint_writes", writes)]
}

/// Copies `source` to `target`; refuses a target with checkpoints (see
/// [`Checkpointer::copy_thread`](mnemograph_checkpoint::checkpoint::Checkpointer::copy_thread)).
pub(crate) async fn copy_thread(
    pool: &MySqlPool,
    layout: Layout,
    source: &str,
    target: &str,
) -> Result<(), CheckpointError> {
    let mut attempt = 0;
    loop {
        match copy_once(pool, layout, source, target).await {
            Err(e) if is_deadlock(&e) && attempt < DEADLOCK_ATTEMPTS => {
                tracing::debug!(attempt, source, target, "copy deadlocked; retrying");
                backoff(attempt).await;
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// One try of [`copy_thread`], in one transaction.
async fn copy_once(
    pool: &MySqlPool,
    layout: Layout,
    source: &str,
    target: &str,
) -> Result<(), CheckpointError> {
    let mut tx = pool.begin().await.map_err(backend)?;
    let taken: Option<i32> =
        sqlx::query_scalar(TARGET_TAKEN).bind(target).fetch_optional(&mut *tx).await.map_err(backend)?;
    if taken.is_some() {
        return Err(CheckpointError::Invalid(format!(
            "cannot copy thread `{source}` to `{target}`: the target (or a thread id the database's \
             collation does not tell from it) has checkpoints"
        )));
    }
    for text in statements(layout) {
        sqlx::query(&text).bind(target).bind(source).bind(source).execute(&mut *tx).await.map_err(backend)?;
    }
    tx.commit().await.map_err(backend)
}
