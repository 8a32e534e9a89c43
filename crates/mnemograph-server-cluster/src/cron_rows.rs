//! The cluster's cron table, `server_crons`: how its rows read and are written.

use serde_json::{Map, Value};
use sqlx::mysql::MySqlRow;
use sqlx::{Executor, MySql, Row};

use super::tables::object_of;
use mnemograph_server::__cluster::cron::{CronRecord, CronSort};

/// The table, made when missing. Timestamps are the API's fixed-width UTC text, so they compare
/// and sort as their times do; `by_due` serves the schedulers' look for due crons.
pub(super) const SETUP: &str = "CREATE TABLE IF NOT EXISTS server_crons (
        cron_id VARCHAR(64) NOT NULL PRIMARY KEY,
        assistant_id VARCHAR(64) NOT NULL,
        thread_id VARCHAR(64) NULL,
        maker LONGTEXT NULL,
        payload LONGTEXT NOT NULL,
        schedule VARCHAR(255) NOT NULL,
        timezone VARCHAR(64) NULL,
        next_run_date VARCHAR(40) NOT NULL,
        end_time VARCHAR(40) NULL,
        metadata LONGTEXT NOT NULL,
        on_run_completed VARCHAR(16) NULL,
        enabled TINYINT(1) NOT NULL,
        created_at VARCHAR(40) NOT NULL,
        updated_at VARCHAR(40) NOT NULL,
        KEY by_due (enabled, next_run_date),
        KEY by_thread (thread_id),
        KEY by_assistant (assistant_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4";

/// The columns of a cron's row.
pub(super) const CRON_COLUMNS: &str =
    "cron_id, assistant_id, thread_id, maker, payload, schedule, timezone, \
     next_run_date, end_time, metadata, on_run_completed, enabled, created_at, updated_at";

/// A cron from its row.
pub(super) fn cron_of(row: &MySqlRow) -> sqlx::Result<CronRecord> {
    let maker: Option<String> = row.try_get("maker")?;
    Ok(CronRecord {
        cron_id: row.try_get("cron_id")?,
        assistant_id: row.try_get("assistant_id")?,
        thread_id: row.try_get("thread_id")?,
        user: maker
            .and_then(|m| serde_json::from_str(&m).ok())
            .and_then(|v| mnemograph_server::__cluster::identity_from_json(&v)),
        payload: object_of(row, "payload"),
        schedule: row.try_get("schedule")?,
        timezone: row.try_get("timezone")?,
        next_run_date: row.try_get("next_run_date")?,
        end_time: row.try_get("end_time")?,
        metadata: object_of(row, "metadata"),
        on_run_completed: row.try_get("on_run_completed")?,
        enabled: row.try_get("enabled")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

fn text(map: &Map<String, Value>) -> String {
    Value::Object(map.clone()).to_string()
}

/// Writes a new cron's row.
pub(super) async fn insert<'e>(db: impl Executor<'e, Database = MySql>, c: &CronRecord) -> sqlx::Result<()> {
    sqlx::query(&format!(
        "INSERT INTO server_crons ({CRON_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    ))
    .bind(&c.cron_id)
    .bind(&c.assistant_id)
    .bind(&c.thread_id)
    .bind(c.user.as_ref().map(|u| u.to_json().to_string()))
    .bind(text(&c.payload))
    .bind(&c.schedule)
    .bind(&c.timezone)
    .bind(&c.next_run_date)
    .bind(&c.end_time)
    .bind(text(&c.metadata))
    .bind(&c.on_run_completed)
    .bind(c.enabled)
    .bind(&c.created_at)
    .bind(&c.updated_at)
    .execute(db)
    .await?;
    Ok(())
}

/// Writes what an update may change of a cron over its row.
pub(super) async fn write<'e>(db: impl Executor<'e, Database = MySql>, c: &CronRecord) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE server_crons SET payload = ?, schedule = ?, timezone = ?, next_run_date = ?, end_time = ?, \
         metadata = ?, on_run_completed = ?, enabled = ?, updated_at = ? WHERE cron_id = ?",
    )
    .bind(text(&c.payload))
    .bind(&c.schedule)
    .bind(&c.timezone)
    .bind(&c.next_run_date)
    .bind(&c.end_time)
    .bind(text(&c.metadata))
    .bind(&c.on_run_completed)
    .bind(c.enabled)
    .bind(&c.updated_at)
    .bind(&c.cron_id)
    .execute(db)
    .await?;
    Ok(())
}

/// The column of the cron table a search sorted by `sort` orders by.
pub(super) fn sort_column(sort: CronSort) -> &'static str {
    match sort {
        CronSort::CronId => "cron_id",
        CronSort::AssistantId => "assistant_id",
        CronSort::ThreadId => "thread_id",
        CronSort::NextRunDate => "next_run_date",
        CronSort::EndTime => "end_time",
        CronSort::CreatedAt => "created_at",
        CronSort::UpdatedAt => "updated_at",
    }
}
