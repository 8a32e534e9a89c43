//! The saver's [`StoredView`]: its threads, and the rows of a thread's checkpoints, blobs and
//! pending writes as LangGraph's tables hold them, every value left for the reader to decode.
//! Ids, channel names and task ids are unescaped ([`crate::text`]); the JSON is shown as stored.

use mnemograph_checkpoint::checkpoint::stored::{
    from_tables, threads_from_rows, BlobRow, CheckpointRow, StoredCheckpoint, StoredThread, StoredView,
    ThreadRow, WriteRow,
};
use mnemograph_checkpoint::checkpoint::CheckpointError;
use mnemograph_checkpoint::BoxFuture;
use sqlx::postgres::PgRow;
use sqlx::Row as _;

use crate::checkpointer::PostgresCheckpointer;
use crate::text::{escape, unescape};

/// Threads with their checkpoint count and their newest checkpoint's record. The newest
/// checkpoint id is the largest (ids are time-ordered uuid6 strings).
const THREADS: &str = r#"SELECT t.thread_id, t.n, t.ns, t.latest,
        c.checkpoint::text AS checkpoint, c.metadata::text AS metadata, c.parent_checkpoint_id
    FROM (SELECT thread_id, count(*) AS n, count(DISTINCT checkpoint_ns) AS ns,
          max(checkpoint_id COLLATE "C") AS latest FROM checkpoints
          GROUP BY thread_id ORDER BY latest DESC LIMIT $1) AS t
    JOIN checkpoints c ON c.thread_id = t.thread_id AND c.checkpoint_id = t.latest
    ORDER BY t.latest DESC, t.thread_id"#;

impl StoredView for PostgresCheckpointer {
    fn stored_threads(&self, limit: usize) -> BoxFuture<'_, Result<Vec<StoredThread>, CheckpointError>> {
        Box::pin(async move {
            let rows = sqlx::query(THREADS)
                .bind(i64::try_from(limit).unwrap_or(i64::MAX))
                .fetch_all(self.pool())
                .await
                .map_err(failed)?;
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
            let (thread, namespace) = (escape(thread_id), escape(checkpoint_ns));
            let only_clause = if checkpoint_id.is_some() { "AND checkpoint_id = $3" } else { "" };
            let limit_clause = match limit {
                Some(limit) => format!("LIMIT {}", i64::try_from(limit).unwrap_or(i64::MAX)),
                None => String::new(),
            };
            let statement = format!(
                "SELECT checkpoint_id, parent_checkpoint_id, checkpoint::text AS checkpoint, \
                 metadata::text AS metadata FROM checkpoints \
                 WHERE thread_id = $1 AND checkpoint_ns = $2 {only_clause} \
                 ORDER BY checkpoint_id DESC {limit_clause}"
            );
            let mut query = sqlx::query(&statement).bind(&*thread).bind(&*namespace);
            if let Some(id) = checkpoint_id {
                query = query.bind(escape(id).into_owned());
            }
            let rows = query.fetch_all(pool).await.map_err(failed)?;
            if rows.is_empty() {
                return Ok(Vec::new());
            }
            let namespace_rows =
                |statement| sqlx::query(statement).bind(&*thread).bind(&*namespace).fetch_all(pool);
            let blobs = namespace_rows(
                "SELECT channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = $2",
            )
            .await
            .map_err(failed)?;
            let writes = namespace_rows(
                "SELECT checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes \
                 WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY task_path COLLATE \"C\", task_id COLLATE \"C\", idx",
            )
            .await
            .map_err(failed)?;
            let checkpoints = rows.iter().map(checkpoint_row).collect();
            let blobs = blobs.iter().filter_map(blob_row).collect();
            let writes: Vec<WriteRow> = writes.iter().map(write_row).collect();
            Ok(from_tables(checkpoint_ns, checkpoints, blobs, &writes, unescape))
        })
    }
}

/// A driver failure as the trait's error, the driver's error its source.
fn failed(err: sqlx::Error) -> CheckpointError {
    CheckpointError::Backend(Box::new(err))
}

/// A text column as stored; `None` when NULL or unreadable.
fn text(row: &PgRow, column: &str) -> Option<String> {
    row.try_get::<Option<String>, _>(column).ok().flatten()
}

fn thread_row(row: &PgRow) -> Result<ThreadRow, sqlx::Error> {
    Ok(ThreadRow {
        thread_id: row.try_get("thread_id").map(unescape)?,
        checkpoints: row.try_get("n")?,
        namespaces: row.try_get("ns")?,
        latest_id: row.try_get("latest").map(unescape)?,
        checkpoint: text(row, "checkpoint"),
        metadata: text(row, "metadata"),
        parent_checkpoint_id: text(row, "parent_checkpoint_id").map(unescape),
    })
}

fn checkpoint_row(row: &PgRow) -> CheckpointRow {
    let json = |column: &str| row.try_get::<Option<String>, _>(column).map_err(|e| e.to_string());
    CheckpointRow {
        checkpoint_id: text(row, "checkpoint_id").unwrap_or_default(),
        parent_checkpoint_id: text(row, "parent_checkpoint_id"),
        checkpoint: json("checkpoint"),
        metadata: json("metadata"),
    }
}

/// A blob row; `None` when its channel or version is NULL.
fn blob_row(row: &PgRow) -> Option<BlobRow> {
    Some(BlobRow {
        channel: text(row, "channel")?,
        version: text(row, "version")?,
        kind: text(row, "type"),
        blob: row.try_get("blob").ok().flatten(),
    })
}

fn write_row(row: &PgRow) -> WriteRow {
    WriteRow {
        checkpoint_id: text(row, "checkpoint_id"),
        task_id: text(row, "task_id"),
        idx: i64::from(row.try_get::<i32, _>("idx").unwrap_or_default()),
        channel: text(row, "channel"),
        kind: text(row, "type"),
        blob: row.try_get("blob").ok().flatten(),
    }
}
