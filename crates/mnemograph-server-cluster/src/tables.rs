//! The cluster's thread and run records in the queue's MySQL tables: reading them as the API
//! shows them, and the few writes that are not the queue's own.

use serde_json::{Map, Value};
use sqlx::mysql::{MySqlPool, MySqlRow};
use sqlx::{MySql, Row, Transaction};

use crate::queue::mysql::db;
use mnemograph_server::__cluster::Stop;
use mnemograph_server::__cluster::{RunRecord, ThreadRecord};
use mnemograph_server::Result;

/// The columns of a thread's record.
pub(super) const THREAD_COLUMNS: &str =
    "thread_id, metadata, status, state_values, interrupts, error, created_at, updated_at";

/// The columns of a run's record, timestamps in the API's format.
pub(super) const RUN_COLUMNS: &str = "run_id, thread_id, assistant_id, metadata, status, kwargs, \
     multitask_strategy, \
     DATE_FORMAT(created_at, '%Y-%m-%dT%H:%i:%s.%f+00:00') AS created, \
     DATE_FORMAT(updated_at, '%Y-%m-%dT%H:%i:%s.%f+00:00') AS updated";

/// JSON text of a column, `null` when the column is NULL or not JSON.
fn json_of(row: &MySqlRow, column: &str) -> Value {
    row.try_get::<Option<String>, _>(column)
        .ok()
        .flatten()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// The JSON object of a column, empty when the column is NULL or not an object.
pub(super) fn object_of(row: &MySqlRow, column: &str) -> Map<String, Value> {
    match json_of(row, column) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A thread status as the API names it.
pub(super) fn thread_status(s: &str) -> &'static str {
    match s {
        "busy" => "busy",
        "interrupted" => "interrupted",
        "error" => "error",
        _ => "idle",
    }
}

/// A run status as the API names it.
pub(super) fn run_status(s: &str) -> &'static str {
    match s {
        "pending" => "pending",
        "running" => "running",
        "success" => "success",
        "error" => "error",
        "timeout" => "timeout",
        _ => "interrupted",
    }
}

/// A stop request as the `stop_requested` column holds it.
pub(super) fn stop_name(how: Stop) -> &'static str {
    match how {
        Stop::Interrupt => "interrupt",
        Stop::Rollback => "rollback",
    }
}

pub(super) fn stop_of(name: Option<&str>) -> Option<Stop> {
    match name? {
        "rollback" => Some(Stop::Rollback),
        _ => Some(Stop::Interrupt),
    }
}

pub(super) fn thread_of(row: &MySqlRow) -> sqlx::Result<ThreadRecord> {
    let mut thread = ThreadRecord::new(row.try_get("thread_id")?, object_of(row, "metadata"));
    thread.status = thread_status(&row.try_get::<String, _>("status")?);
    thread.values = json_of(row, "state_values");
    thread.interrupts = object_of(row, "interrupts");
    thread.error = json_of(row, "error");
    thread.created_at = row.try_get("created_at")?;
    thread.updated_at = row.try_get("updated_at")?;
    Ok(thread)
}

pub(super) fn run_of(row: &MySqlRow) -> sqlx::Result<RunRecord> {
    Ok(RunRecord {
        run_id: row.try_get("run_id")?,
        thread_id: row.try_get("thread_id")?,
        assistant_id: row.try_get("assistant_id")?,
        metadata: object_of(row, "metadata"),
        status: run_status(&row.try_get::<String, _>("status")?),
        kwargs: json_of(row, "kwargs"),
        multitask_strategy: row.try_get("multitask_strategy")?,
        created_at: row.try_get::<Option<String>, _>("created")?.unwrap_or_default(),
        updated_at: row.try_get::<Option<String>, _>("updated")?.unwrap_or_default(),
    })
}

/// Writes a new thread record; `false` when the id is taken.
pub(super) async fn insert_thread(
    tx: &mut Transaction<'_, MySql>,
    t: &ThreadRecord,
    temporary: bool,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "INSERT IGNORE INTO server_threads \
         (thread_id, metadata, status, state_values, interrupts, error, temporary, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&t.thread_id)
    .bind(Value::Object(t.metadata.clone()).to_string())
    .bind(t.status)
    .bind(t.values.to_string())
    .bind(Value::Object(t.interrupts.clone()).to_string())
    .bind(t.error.to_string())
    .bind(temporary)
    .bind(&t.created_at)
    .bind(&t.updated_at)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A thread's record, locked for the transaction when `lock`.
pub(super) async fn thread_in(
    tx: &mut Transaction<'_, MySql>,
    thread_id: &str,
    lock: bool,
) -> sqlx::Result<Option<(ThreadRecord, bool)>> {
    let sql = format!(
        "SELECT {THREAD_COLUMNS}, temporary FROM server_threads WHERE thread_id = ?{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    let Some(row) = sqlx::query(&sql).bind(thread_id).fetch_optional(&mut **tx).await? else {
        return Ok(None);
    };
    Ok(Some((thread_of(&row)?, row.try_get::<i8, _>("temporary")? != 0)))
}

/// The thread's runs that have not ended: `(run_id, status)`, oldest first, locked.
pub(super) async fn open_runs(
    tx: &mut Transaction<'_, MySql>,
    thread_id: &str,
) -> sqlx::Result<Vec<(String, String)>> {
    let rows = sqlx::query(
        "SELECT run_id, status FROM server_runs WHERE thread_id = ? AND status IN ('pending', 'running') \
         ORDER BY seq FOR UPDATE",
    )
    .bind(thread_id)
    .fetch_all(&mut **tx)
    .await?;
    rows.iter().map(|r| Ok((r.try_get("run_id")?, r.try_get("status")?))).collect()
}

/// Asks a thread's open runs to stop: pending ones end here (and are deleted for a rollback),
/// running ones get the request. Returns the ids of the runs that ended here and of those asked.
pub(super) async fn stop_open_runs(
    tx: &mut Transaction<'_, MySql>,
    runs: &[(String, String)],
    how: Stop,
) -> sqlx::Result<(Vec<String>, Vec<String>)> {
    let (mut ended, mut asked) = (Vec::new(), Vec::new());
    for (run_id, status) in runs {
        if status == "pending" {
            end_pending(tx, run_id, how).await?;
            ended.push(run_id.clone());
        } else {
            sqlx::query("UPDATE server_runs SET stop_requested = ? WHERE run_id = ?")
                .bind(stop_name(how))
                .bind(run_id)
                .execute(&mut **tx)
                .await?;
            asked.push(run_id.clone());
        }
    }
    Ok((ended, asked))
}

/// Ends a run that has not started: `interrupted`, or deleted for a rollback.
pub(super) async fn end_pending(
    tx: &mut Transaction<'_, MySql>,
    run_id: &str,
    how: Stop,
) -> sqlx::Result<()> {
    let sql = match how {
        Stop::Rollback => "DELETE FROM server_runs WHERE run_id = ? AND status = 'pending'",
        Stop::Interrupt => {
            "UPDATE server_runs SET status = 'interrupted', updated_at = UTC_TIMESTAMP(6) \
             WHERE run_id = ? AND status = 'pending'"
        }
    };
    sqlx::query(sql).bind(run_id).execute(&mut **tx).await?;
    Ok(())
}

/// A run's record.
pub(super) async fn run(pool: &MySqlPool, run_id: &str) -> Result<Option<RunRecord>> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM server_runs WHERE run_id = ?");
    let row = sqlx::query(&sql).bind(run_id).fetch_optional(pool).await.map_err(db)?;
    row.as_ref().map(run_of).transpose().map_err(db)
}

/// A run's status and output, `None` for a run not (or no longer) recorded.
pub(super) async fn outcome(pool: &MySqlPool, run_id: &str) -> Result<Option<(String, Value)>> {
    let row = sqlx::query("SELECT status, output FROM server_runs WHERE run_id = ?")
        .bind(run_id)
        .fetch_optional(pool)
        .await
        .map_err(db)?;
    row.map(|r| Ok((r.try_get::<String, _>("status")?, json_of(&r, "output")))).transpose().map_err(db)
}

/// How a run was asked to stop, if it was.
pub(super) async fn stop_requested(pool: &MySqlPool, run_id: &str) -> Result<Option<Stop>> {
    let row = sqlx::query("SELECT stop_requested FROM server_runs WHERE run_id = ?")
        .bind(run_id)
        .fetch_optional(pool)
        .await
        .map_err(db)?;
    let name: Option<String> = row.map(|r| r.try_get("stop_requested")).transpose().map_err(db)?.flatten();
    Ok(stop_of(name.as_deref()))
}
