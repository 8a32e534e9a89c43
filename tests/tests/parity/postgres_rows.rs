//! Byte parity on PostgreSQL: the rows a thread leaves in the three tables, read so that
//! `bytes.rs` compares them as it compares MySQL's (the documents as JSON text).

use serde_json::Value;

use crate::bytes::{read_rows, RowQueries};
use crate::handoff::same_rows_on;
use crate::postgres::setup;

/// Postgres' [`RowQueries`].
const POSTGRES: RowQueries = RowQueries {
    checkpoints:
        "SELECT checkpoint_id, parent_checkpoint_id, checkpoint_ns, checkpoint::text, metadata::text \
                  FROM checkpoints WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id",
    blobs: "SELECT channel, version, type, blob, checkpoint_ns FROM checkpoint_blobs WHERE thread_id = $1 \
            ORDER BY checkpoint_ns, channel, version",
    writes:
        "SELECT checkpoint_id, task_path, idx, channel, type, blob, checkpoint_ns FROM checkpoint_writes \
             WHERE thread_id = $1",
};

/// Runs `ops` on `case` once in each language on PostgreSQL and compares the rows.
pub(crate) async fn same_rows(case: &str, ops: &[Value]) {
    let Some((saver, peer)) = setup().await else { return };
    let pool = saver.pool().clone();
    let graph = crate::cases::graph(case, saver);
    same_rows_on(&peer, &graph, case, ops, async |thread: &str| {
        read_rows(&pool, &POSTGRES, thread, case).await
    })
    .await;
}
