//! The `tool_invocations` audit table: one row per tool call of an archived round (call id,
//! thread, tool, arguments, duration, outcome, error), written in the round's archive
//! transaction, so a round's answer and the calls behind it are stored together or not at all.
//!
//! Tool results themselves are not kept (they live in the Redis snapshot, truncated); the
//! error text of a failed call is, as that is what an audit asks about.

use serde::{Deserialize, Serialize};
use sqlx::{MySql, Transaction};

use crate::error::Result;

/// The table, created at start-up next to `chat_messages`. `message_id` is the `chat_messages`
/// row of the answer the calls led to. Times are UTC with milliseconds.
pub const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS tool_invocations (
    id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    message_id BIGINT UNSIGNED NOT NULL,
    thread_id VARCHAR(255) NOT NULL,
    call_id VARCHAR(255) NOT NULL,
    tool VARCHAR(128) NOT NULL,
    arguments JSON NOT NULL,
    duration_ms BIGINT UNSIGNED NOT NULL,
    outcome ENUM('ok', 'error') NOT NULL,
    error TEXT NULL,
    created_at DATETIME(3) NOT NULL,
    KEY tool_invocations_thread (thread_id, id),
    KEY tool_invocations_message (message_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci";

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The tool returned a result.
    Ok,
    /// The tool failed; the model was shown the error.
    Error,
}

impl Outcome {
    /// The value of the `outcome` column (and of the log events' field).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Error => "error",
        }
    }
}

/// One tool call of a round, as the audit keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInvocation {
    /// The model's call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The arguments, as JSON text.
    pub arguments: String,
    /// How long the call took.
    pub duration_ms: u64,
    /// How it ended.
    pub outcome: Outcome,
    /// What the model was shown when it failed.
    pub error: Option<String>,
}

/// Writes `calls` inside `tx`, each pointing at `message_id`.
///
/// # Errors
/// [`Error::Archive`](crate::Error::Archive); the caller's transaction is then rolled back.
pub async fn insert(
    tx: &mut Transaction<'static, MySql>,
    message_id: u64,
    thread_id: &str,
    calls: &[ToolInvocation],
) -> Result<()> {
    let insert = "INSERT INTO tool_invocations \
        (message_id, thread_id, call_id, tool, arguments, duration_ms, outcome, error, created_at) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(3))";
    for call in calls {
        sqlx::query(insert)
            .bind(message_id)
            .bind(thread_id)
            .bind(&call.call_id)
            .bind(&call.tool)
            .bind(&call.arguments)
            .bind(call.duration_ms)
            .bind(call.outcome.as_str())
            .bind(call.error.as_deref())
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
