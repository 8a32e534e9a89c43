//! The cluster's assistant tables: `server_assistants` holds each assistant at its latest version,
//! `server_assistant_versions` every version of each; how their rows read and are written.

use serde_json::Value;
use sqlx::mysql::MySqlRow;
use sqlx::{MySql, Row, Transaction};

use super::tables::object_of;
use mnemograph_server::__cluster::{AssistantRecord, SortBy};

/// The tables, made when missing. Timestamps are the API's fixed-width UTC text, so they sort as
/// their times do.
pub(super) const SETUP: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS server_assistants (
        assistant_id VARCHAR(64) NOT NULL PRIMARY KEY,
        graph_id VARCHAR(255) NOT NULL,
        config LONGTEXT NOT NULL,
        context LONGTEXT NOT NULL,
        metadata LONGTEXT NOT NULL,
        name TEXT NOT NULL,
        description LONGTEXT NULL,
        version BIGINT NOT NULL,
        created_at VARCHAR(40) NOT NULL,
        updated_at VARCHAR(40) NOT NULL,
        KEY by_created (created_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE IF NOT EXISTS server_assistant_versions (
        assistant_id VARCHAR(64) NOT NULL,
        version BIGINT NOT NULL,
        graph_id VARCHAR(255) NOT NULL,
        config LONGTEXT NOT NULL,
        context LONGTEXT NOT NULL,
        metadata LONGTEXT NOT NULL,
        name TEXT NOT NULL,
        description LONGTEXT NULL,
        created_at VARCHAR(40) NOT NULL,
        PRIMARY KEY (assistant_id, version)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
];

/// The columns of an assistant's row.
pub(super) const ASSISTANT_COLUMNS: &str =
    "assistant_id, graph_id, config, context, metadata, name, description, version, created_at, updated_at";

/// The columns of a version's row.
pub(super) const VERSION_COLUMNS: &str =
    "assistant_id, graph_id, config, context, metadata, name, description, version, created_at";

/// An assistant, or a version (whose `updated_at` is its `created_at`), from its row.
pub(super) fn assistant_of(row: &MySqlRow) -> sqlx::Result<AssistantRecord> {
    let created_at: String = row.try_get("created_at")?;
    let updated_at = row.try_get::<String, _>("updated_at").unwrap_or_else(|_| created_at.clone());
    Ok(AssistantRecord {
        assistant_id: row.try_get("assistant_id")?,
        graph_id: row.try_get("graph_id")?,
        config: object_of(row, "config"),
        context: object_of(row, "context"),
        metadata: object_of(row, "metadata"),
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        version: row.try_get("version")?,
        created_at,
        updated_at,
    })
}

fn text(map: &serde_json::Map<String, Value>) -> String {
    Value::Object(map.clone()).to_string()
}

/// Writes a new assistant's row; `false` when the id is taken.
pub(super) async fn insert_assistant(
    tx: &mut Transaction<'_, MySql>,
    a: &AssistantRecord,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "INSERT IGNORE INTO server_assistants \
         (assistant_id, graph_id, config, context, metadata, name, description, version, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&a.assistant_id)
    .bind(&a.graph_id)
    .bind(text(&a.config))
    .bind(text(&a.context))
    .bind(text(&a.metadata))
    .bind(&a.name)
    .bind(&a.description)
    .bind(a.version)
    .bind(&a.created_at)
    .bind(&a.updated_at)
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Writes a version's row.
pub(super) async fn insert_version(tx: &mut Transaction<'_, MySql>, v: &AssistantRecord) -> sqlx::Result<()> {
    sqlx::query(
        "INSERT INTO server_assistant_versions \
         (assistant_id, version, graph_id, config, context, metadata, name, description, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&v.assistant_id)
    .bind(v.version)
    .bind(&v.graph_id)
    .bind(text(&v.config))
    .bind(text(&v.context))
    .bind(text(&v.metadata))
    .bind(&v.name)
    .bind(&v.description)
    .bind(&v.created_at)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Makes `latest` the assistant's row: every field but its creation time.
pub(super) async fn write_latest(
    tx: &mut Transaction<'_, MySql>,
    latest: &AssistantRecord,
) -> sqlx::Result<()> {
    sqlx::query(
        "UPDATE server_assistants SET graph_id = ?, config = ?, context = ?, metadata = ?, name = ?, \
         description = ?, version = ?, updated_at = ? WHERE assistant_id = ?",
    )
    .bind(&latest.graph_id)
    .bind(text(&latest.config))
    .bind(text(&latest.context))
    .bind(text(&latest.metadata))
    .bind(&latest.name)
    .bind(&latest.description)
    .bind(latest.version)
    .bind(&latest.updated_at)
    .bind(&latest.assistant_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The assistant's row, locked for the transaction.
pub(super) async fn locked(
    tx: &mut Transaction<'_, MySql>,
    assistant_id: &str,
) -> sqlx::Result<Option<AssistantRecord>> {
    let sql = format!("SELECT {ASSISTANT_COLUMNS} FROM server_assistants WHERE assistant_id = ? FOR UPDATE");
    let row = sqlx::query(&sql).bind(assistant_id).fetch_optional(&mut **tx).await?;
    row.as_ref().map(assistant_of).transpose()
}

/// The column of the assistant table a search sorted by `sort` orders by; names and graph ids
/// without regard to case, as LangGraph orders them.
pub(super) fn sort_column(sort: SortBy) -> &'static str {
    match sort {
        SortBy::AssistantId => "assistant_id",
        SortBy::GraphId => "LOWER(graph_id)",
        SortBy::Name => "LOWER(name)",
        SortBy::CreatedAt => "created_at",
        SortBy::UpdatedAt => "updated_at",
    }
}
