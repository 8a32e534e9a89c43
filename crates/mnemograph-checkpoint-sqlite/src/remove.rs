//! Removing rows: `delete_thread`, `delete_for_runs` and `prune`, each one transaction.
//!
//! Lists of ids are bound as one JSON array and read with `json_each`, so every statement is
//! fixed text whatever the number of ids.

use mnemograph_checkpoint::checkpoint::{CheckpointError, PruneStrategy};
use sqlx::SqlitePool;

use crate::error::backend;
use crate::filter::metadata_field;

/// Every checkpoint and pending write of `thread_id`, in all namespaces.
pub(crate) async fn delete_thread(pool: &SqlitePool, thread_id: &str) -> Result<(), CheckpointError> {
    delete_threads(pool, &[thread_id.to_owned()], "delete_thread").await
}

async fn delete_threads(
    pool: &SqlitePool,
    thread_ids: &[String],
    operation: &'static str,
) -> Result<(), CheckpointError> {
    let ids = json_list(thread_ids);
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(backend(operation))?;
    for table in ["checkpoints", "writes"] {
        sqlx::query(&format!("DELETE FROM {table} WHERE thread_id IN (SELECT value FROM json_each(?))"))
            .bind(&ids)
            .execute(&mut *tx)
            .await
            .map_err(backend(operation))?;
    }
    tx.commit().await.map_err(backend(operation))
}

/// The checkpoints whose metadata names one of `run_ids`, with their pending writes.
pub(crate) async fn delete_for_runs(pool: &SqlitePool, run_ids: &[String]) -> Result<(), CheckpointError> {
    if run_ids.is_empty() {
        return Ok(());
    }
    let ids = json_list(run_ids);
    let run_id = metadata_field("run_id");
    let failed = backend("delete_for_runs");
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(&failed)?;
    sqlx::query(&format!(
        "DELETE FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN \
         (SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints \
          WHERE {run_id} IN (SELECT value FROM json_each(?)))"
    ))
    .bind(&ids)
    .execute(&mut *tx)
    .await
    .map_err(&failed)?;
    sqlx::query(&format!("DELETE FROM checkpoints WHERE {run_id} IN (SELECT value FROM json_each(?))"))
        .bind(&ids)
        .execute(&mut *tx)
        .await
        .map_err(&failed)?;
    tx.commit().await.map_err(&failed)
}

/// LangGraph's `prune` of `thread_ids`.
pub(crate) async fn prune(
    pool: &SqlitePool,
    thread_ids: &[String],
    strategy: PruneStrategy,
) -> Result<(), CheckpointError> {
    if thread_ids.is_empty() {
        return Ok(());
    }
    if strategy == PruneStrategy::Delete {
        return delete_threads(pool, thread_ids, "prune").await;
    }
    let ids = json_list(thread_ids);
    let failed = backend("prune");
    let latest = |table: &str| {
        format!(
            "(SELECT MAX(c.checkpoint_id) FROM checkpoints c \
              WHERE c.thread_id = {table}.thread_id AND c.checkpoint_ns = {table}.checkpoint_ns)"
        )
    };
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(&failed)?;
    // Writes first: they are kept by the latest checkpoint of their namespace, read before it goes.
    for (table, keep) in [("writes", "IS NOT"), ("checkpoints", "<")] {
        let (keep, latest) = (keep, latest(table));
        let sql = format!(
            "DELETE FROM {table} WHERE thread_id IN (SELECT value FROM json_each(?)) AND checkpoint_id {keep} {latest}"
        );
        sqlx::query(&sql).bind(&ids).execute(&mut *tx).await.map_err(&failed)?;
    }
    tx.commit().await.map_err(&failed)
}

/// `ids` as a JSON array, for `json_each(?)`.
pub(crate) fn json_list(ids: &[String]) -> String {
    serde_json::Value::from(ids.to_vec()).to_string()
}
