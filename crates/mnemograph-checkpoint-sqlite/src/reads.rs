//! `get_tuple` and `list`: a checkpoint row, then its pending writes.

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, CheckpointTuple, ListOptions};
use sqlx::SqlitePool;

use crate::error::backend;
use crate::filter::Where;
use crate::rows::{CheckpointRow, WriteRow, CHECKPOINT_COLUMNS, PENDING_WRITES};

/// The checkpoint at `config` (its latest when it names none), with its pending writes.
pub(crate) async fn get_tuple(
    pool: &SqlitePool,
    config: &CheckpointConfig,
) -> Result<Option<CheckpointTuple>, CheckpointError> {
    let row: Option<CheckpointRow> = match &config.checkpoint_id {
        Some(id) => {
            let sql = format!(
                "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints \
                 WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
            );
            sqlx::query_as(&sql)
                .bind(&config.thread_id)
                .bind(&config.checkpoint_ns)
                .bind(id)
                .fetch_optional(pool)
                .await
        }
        None => {
            let sql = format!(
                "SELECT {CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? \
                 ORDER BY checkpoint_id DESC LIMIT 1"
            );
            sqlx::query_as(&sql)
                .bind(&config.thread_id)
                .bind(&config.checkpoint_ns)
                .fetch_optional(pool)
                .await
        }
    }
    .map_err(backend("get_tuple"))?;
    match row {
        Some(row) => Ok(Some(with_writes(pool, row, "get_tuple").await?)),
        None => Ok(None),
    }
}

/// Checkpoints newest first, of one thread and namespace or of all threads.
pub(crate) async fn list(
    pool: &SqlitePool,
    config: Option<&CheckpointConfig>,
    options: ListOptions,
) -> Result<Vec<CheckpointTuple>, CheckpointError> {
    let clause = Where::new(config, &options)?;
    let mut sql =
        format!("SELECT {CHECKPOINT_COLUMNS} FROM checkpoints {} ORDER BY checkpoint_id DESC", clause.sql());
    if options.limit.is_some() {
        sql.push_str(" LIMIT ?");
    }
    let mut query = clause.bind(sqlx::query_as::<_, CheckpointRow>(&sql));
    if let Some(limit) = options.limit {
        query = query.bind(i64::try_from(limit).unwrap_or(i64::MAX));
    }
    let rows = query.fetch_all(pool).await.map_err(backend("list"))?;
    let mut tuples = Vec::with_capacity(rows.len());
    for row in rows {
        tuples.push(with_writes(pool, row, "list").await?);
    }
    Ok(tuples)
}

/// The tuple of `row`, its pending writes read.
async fn with_writes(
    pool: &SqlitePool,
    row: CheckpointRow,
    operation: &'static str,
) -> Result<CheckpointTuple, CheckpointError> {
    let writes: Vec<WriteRow> = sqlx::query_as(PENDING_WRITES)
        .bind(&row.thread_id)
        .bind(&row.checkpoint_ns)
        .bind(&row.checkpoint_id)
        .fetch_all(pool)
        .await
        .map_err(backend(operation))?;
    row.into_tuple(writes)
}
