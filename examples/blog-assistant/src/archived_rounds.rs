//! The `archived_rounds` table: the snapshot checkpoint each archived round was committed as,
//! one row per round, written in the round's archive transaction.
//!
//! It is how the archive answers "do I hold the round this checkpoint stored?" exactly, which
//! is what makes writing a round from its checkpoint ([`recovery`](crate::recovery)) safe to
//! repeat: the row's primary key lets one writer of a round in, and refuses every other one,
//! even two at the same moment on two processes.

use sqlx::{MySql, MySqlPool, Transaction};

use crate::error::Result;

/// The table, created at start-up next to `chat_messages`. `message_id` is the `chat_messages`
/// row of the round's answer. Times are UTC with milliseconds.
pub const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS archived_rounds (
    thread_id VARCHAR(255) NOT NULL,
    checkpoint_id VARCHAR(64) NOT NULL,
    message_id BIGINT UNSIGNED NOT NULL,
    created_at DATETIME(3) NOT NULL,
    PRIMARY KEY (thread_id, checkpoint_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci";

/// Notes inside `tx` that `checkpoint_id` of `thread_id` is archived, its answer being
/// `message_id`.
///
/// # Errors
/// [`Error::Archive`](crate::Error::Archive), a duplicate key when the round is archived
/// already (see [`is_duplicate`]); the caller's transaction is then rolled back.
pub async fn insert(
    tx: &mut Transaction<'static, MySql>,
    thread_id: &str,
    checkpoint_id: &str,
    message_id: u64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO archived_rounds (thread_id, checkpoint_id, message_id, created_at) \
         VALUES (?, ?, ?, UTC_TIMESTAMP(3))",
    )
    .bind(thread_id)
    .bind(checkpoint_id)
    .bind(message_id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Whether the round committed as `checkpoint_id` of `thread_id` is archived.
///
/// # Errors
/// [`Error::Archive`](crate::Error::Archive).
pub async fn contains(pool: &MySqlPool, thread_id: &str, checkpoint_id: &str) -> Result<bool> {
    let found: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM archived_rounds WHERE thread_id = ? AND checkpoint_id = ?")
            .bind(thread_id)
            .bind(checkpoint_id)
            .fetch_optional(pool)
            .await?;
    Ok(found.is_some())
}

/// Whether `e` is the refusal of a second row for one round: that round is archived already.
pub fn is_duplicate(e: &crate::Error) -> bool {
    match e {
        crate::Error::Archive(sqlx::Error::Database(db)) => db.is_unique_violation(),
        _ => false,
    }
}
