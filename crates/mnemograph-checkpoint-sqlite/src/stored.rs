//! The saver's [`StoredView`]: its threads, and the rows of a thread's checkpoints and pending
//! writes as LangGraph's SQLite tables hold them, every value left for the reader to decode.
//! A checkpoint row holds the whole checkpoint, channel values inside, as one msgpack document;
//! [`from_packed`] shows each of those values as a blob of its channel.

use mnemograph_checkpoint::checkpoint::stored::{
    from_packed, PackedRow, StoredCheckpoint, StoredThread, StoredView, WriteRow,
};
use mnemograph_checkpoint::checkpoint::CheckpointError;
use mnemograph_checkpoint::BoxFuture;
use sqlx::sqlite::SqliteRow;
use sqlx::Row as _;

use crate::checkpointer::SqliteCheckpointer;
use crate::error::backend;

/// Threads with their checkpoint count and their newest checkpoint's row. The newest checkpoint
/// id is the largest (ids are time-ordered uuid6 strings, compared bytewise).
const THREADS: &str = "SELECT t.thread_id, t.n, t.ns, t.latest, \
        c.parent_checkpoint_id, c.type, c.checkpoint, c.metadata \
    FROM (SELECT thread_id, COUNT(*) AS n, COUNT(DISTINCT checkpoint_ns) AS ns, \
          MAX(checkpoint_id) AS latest FROM checkpoints \
          GROUP BY thread_id ORDER BY latest DESC LIMIT ?) AS t \
    JOIN checkpoints c ON c.thread_id = t.thread_id AND c.checkpoint_id = t.latest \
    ORDER BY t.latest DESC, t.thread_id";

/// The pending writes of a namespace in the saver's order: by task path, task id and index.
const WRITES: &str = "SELECT checkpoint_id, task_id, idx, channel, type, value FROM writes \
     WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY task_path, task_id, idx";

impl StoredView for SqliteCheckpointer {
    fn stored_threads(&self, limit: usize) -> BoxFuture<'_, Result<Vec<StoredThread>, CheckpointError>> {
        Box::pin(async move {
            let rows = sqlx::query(THREADS)
                .bind(i64::try_from(limit).unwrap_or(i64::MAX))
                .fetch_all(self.pool())
                .await
                .map_err(backend("stored_threads"))?;
            let mut out: Vec<StoredThread> = Vec::with_capacity(rows.len());
            for row in &rows {
                let thread_id = text(row, "thread_id").unwrap_or_default();
                // Subgraph namespaces may share the newest id, giving a thread several rows.
                if out.iter().any(|t| t.thread_id == thread_id) {
                    continue;
                }
                let count =
                    |column: &str| row.try_get::<i64, _>(column).map(|n| u64::try_from(n).unwrap_or(0));
                let latest = packed_row(row, "latest");
                out.push(StoredThread {
                    thread_id,
                    checkpoints: count("n").map_err(backend("stored_threads"))?,
                    namespaces: count("ns").map_err(backend("stored_threads"))?,
                    latest_record: latest.record().ok(),
                    latest_id: latest.checkpoint_id,
                });
            }
            Ok(out)
        })
    }

    fn stored_checkpoints<'a>(
        &'a self,
        thread_id: &'a str,
        checkpoint_ns: &'a str,
        checkpoint_id: Option<&'a str>,
        limit: Option<usize>,
    ) -> BoxFuture<'a, Result<Vec<StoredCheckpoint>, CheckpointError>> {
        Box::pin(async move {
            let only_clause = if checkpoint_id.is_some() { "AND checkpoint_id = ?" } else { "" };
            let limit_clause = if limit.is_some() { "LIMIT ?" } else { "" };
            let statement = format!(
                "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints \
                 WHERE thread_id = ? AND checkpoint_ns = ? {only_clause} \
                 ORDER BY checkpoint_id DESC {limit_clause}"
            );
            let mut query = sqlx::query(&statement).bind(thread_id).bind(checkpoint_ns);
            if let Some(id) = checkpoint_id {
                query = query.bind(id);
            }
            if let Some(limit) = limit {
                query = query.bind(i64::try_from(limit).unwrap_or(i64::MAX));
            }
            let rows = query.fetch_all(self.pool()).await.map_err(backend("stored_checkpoints"))?;
            if rows.is_empty() {
                return Ok(Vec::new());
            }
            let writes = sqlx::query(WRITES)
                .bind(thread_id)
                .bind(checkpoint_ns)
                .fetch_all(self.pool())
                .await
                .map_err(backend("stored_checkpoints"))?;
            let checkpoints = rows.iter().map(|row| packed_row(row, "checkpoint_id")).collect();
            let writes: Vec<WriteRow> = writes.iter().map(write_row).collect();
            Ok(from_packed(checkpoint_ns, checkpoints, &writes))
        })
    }
}

/// A text column as stored; `None` when NULL or not text. Unchecked: SQLite types a value, not
/// a column, so a value is read by what it holds.
fn text(row: &SqliteRow, column: &str) -> Option<String> {
    row.try_get_unchecked::<Option<String>, _>(column).ok().flatten()
}

/// A blob column as stored (text is read as its bytes); `None` when NULL.
fn bytes(row: &SqliteRow, column: &str) -> Option<Vec<u8>> {
    row.try_get_unchecked::<Option<Vec<u8>>, _>(column).ok().flatten()
}

/// A `checkpoints` row, its id in column `id_column`. The metadata is JSON text in UTF-8,
/// stored as a blob by both LangGraph and this crate.
fn packed_row(row: &SqliteRow, id_column: &str) -> PackedRow {
    let metadata = match row.try_get_unchecked::<Option<Vec<u8>>, _>("metadata") {
        Ok(Some(bytes)) => String::from_utf8(bytes).map(Some).map_err(|e| format!("not UTF-8: {e}")),
        Ok(None) => Ok(None),
        Err(e) => Err(e.to_string()),
    };
    PackedRow {
        checkpoint_id: text(row, id_column).unwrap_or_default(),
        parent_checkpoint_id: text(row, "parent_checkpoint_id"),
        kind: text(row, "type"),
        checkpoint: bytes(row, "checkpoint"),
        metadata,
    }
}

fn write_row(row: &SqliteRow) -> WriteRow {
    WriteRow {
        checkpoint_id: text(row, "checkpoint_id"),
        task_id: text(row, "task_id"),
        idx: row.try_get::<i64, _>("idx").unwrap_or_default(),
        channel: text(row, "channel"),
        kind: text(row, "type"),
        blob: bytes(row, "value"),
    }
}
