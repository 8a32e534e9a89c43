//! The saver's [`StoredView`]: its threads, and the rows of a thread's checkpoints, blobs and
//! pending writes as LangGraph's tables hold them, every value left for the reader to decode.

use mnemograph_checkpoint::checkpoint::stored::{
    from_tables, threads_from_rows, BlobRow, CheckpointRow, StoredCheckpoint, StoredThread, StoredView,
    ThreadRow, WriteRow,
};
use mnemograph_checkpoint::checkpoint::CheckpointError;
use mnemograph_checkpoint::BoxFuture;
use sqlx::mysql::MySqlRow;
use sqlx::Row as _;

use crate::checkpointer::MySqlCheckpointer;

/// Threads with their checkpoint count and their newest checkpoint's record. The newest
/// checkpoint id is the largest (ids are time-ordered uuid6 strings).
const THREADS: &str = "SELECT t.thread_id, t.n, t.ns, t.latest, \
        c.checkpoint, c.metadata, c.parent_checkpoint_id \
    FROM (SELECT thread_id, COUNT(*) AS n, COUNT(DISTINCT checkpoint_ns_hash) AS ns, \
          MAX(checkpoint_id) AS latest FROM checkpoints \
          GROUP BY thread_id ORDER BY latest DESC LIMIT ?) AS t \
    JOIN checkpoints c ON c.thread_id = t.thread_id AND c.checkpoint_id = t.latest \
    ORDER BY t.latest DESC, t.thread_id";

impl StoredView for MySqlCheckpointer {
    fn stored_threads(&self, limit: usize) -> BoxFuture<'_, Result<Vec<StoredThread>, CheckpointError>> {
        Box::pin(async move {
            let rows =
                sqlx::query(THREADS).bind(limit as u64).fetch_all(self.pool()).await.map_err(failed)?;
            let rows = rows.iter().map(thread_row).collect::<Result<_, _>>().map_err(failed)?;
            Ok(threads_from_rows(rows))
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
            let pool = self.pool();
            let only_clause = if checkpoint_id.is_some() { "AND checkpoint_id = ?" } else { "" };
            let limit_clause = if limit.is_some() { "LIMIT ?" } else { "" };
            let statement = format!(
                "SELECT checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints \
                 WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5(?)) {only_clause} \
                 ORDER BY checkpoint_id DESC {limit_clause}"
            );
            let mut query = sqlx::query(&statement).bind(thread_id).bind(checkpoint_ns);
            if let Some(id) = checkpoint_id {
                query = query.bind(id);
            }
            if let Some(limit) = limit {
                query = query.bind(limit as u64);
            }
            let rows = query.fetch_all(pool).await.map_err(failed)?;
            if rows.is_empty() {
                return Ok(Vec::new());
            }
            let namespace_rows =
                |statement| sqlx::query(statement).bind(thread_id).bind(checkpoint_ns).fetch_all(pool);
            let blobs = namespace_rows(
                "SELECT channel, version, type, `blob` FROM checkpoint_blobs \
                 WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5(?))",
            )
            .await
            .map_err(failed)?;
            let writes = namespace_rows(
                "SELECT checkpoint_id, task_id, idx, channel, type, `blob` FROM checkpoint_writes \
                 WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5(?))",
            )
            .await
            .map_err(failed)?;
            let checkpoints = rows.iter().map(checkpoint_row).collect();
            let blobs = blobs.iter().filter_map(blob_row).collect();
            let writes: Vec<WriteRow> = writes.iter().map(write_row).collect();
            Ok(from_tables(checkpoint_ns, checkpoints, blobs, &writes, |text| text))
        })
    }
}

/// A driver failure as the trait's error, the driver's error its source.
fn failed(err: sqlx::Error) -> CheckpointError {
    CheckpointError::Backend(Box::new(err))
}

/// A text column, read unchecked: MySQL types JSON columns as JSON or LONGTEXT, which sqlx's
/// checked `String` refuses.
fn text(row: &MySqlRow, column: &str) -> Result<Option<String>, sqlx::Error> {
    row.try_get_unchecked::<Option<String>, _>(column)
}

fn thread_row(row: &MySqlRow) -> Result<ThreadRow, sqlx::Error> {
    Ok(ThreadRow {
        thread_id: text(row, "thread_id")?.unwrap_or_default(),
        checkpoints: row.try_get("n")?,
        namespaces: row.try_get("ns")?,
        latest_id: text(row, "latest")?.unwrap_or_default(),
        checkpoint: text(row, "checkpoint").ok().flatten(),
        metadata: text(row, "metadata").ok().flatten(),
        parent_checkpoint_id: text(row, "parent_checkpoint_id").ok().flatten(),
    })
}

fn checkpoint_row(row: &MySqlRow) -> CheckpointRow {
    let json = |column: &str| text(row, column).map_err(|e| e.to_string());
    CheckpointRow {
        checkpoint_id: text(row, "checkpoint_id").ok().flatten().unwrap_or_default(),
        parent_checkpoint_id: text(row, "parent_checkpoint_id").ok().flatten(),
        checkpoint: json("checkpoint"),
        metadata: json("metadata"),
    }
}

/// A blob row; `None` when its channel or version is NULL.
fn blob_row(row: &MySqlRow) -> Option<BlobRow> {
    Some(BlobRow {
        channel: text(row, "channel").ok().flatten()?,
        version: text(row, "version").ok().flatten()?,
        kind: text(row, "type").ok().flatten(),
        blob: row.try_get("blob").ok().flatten(),
    })
}

fn write_row(row: &MySqlRow) -> WriteRow {
    WriteRow {
        checkpoint_id: text(row, "checkpoint_id").ok().flatten(),
        task_id: text(row, "task_id").ok().flatten(),
        idx: row.try_get::<i64, _>("idx").unwrap_or_default(),
        channel: text(row, "channel").ok().flatten(),
        kind: text(row, "type").ok().flatten(),
        blob: row.try_get("blob").ok().flatten(),
    }
}
