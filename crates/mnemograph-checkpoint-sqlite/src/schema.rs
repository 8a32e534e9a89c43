//! The tables, exactly as LangGraph's SQLite saver creates them, so either side's `setup` finds
//! the other's database ready.

use sqlx::SqlitePool;

use crate::error::{Error, Result};

/// LangGraph's `SqliteSaver.setup()` statements: the `checkpoints` and `writes` tables with their
/// primary keys. `IF NOT EXISTS` makes them no-ops on a database either side set up.
const CREATE_TABLES: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint BLOB,
    metadata BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
)",
    "CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
)",
];

/// Creates the tables when missing, and adds `task_path` to a `writes` table from before that
/// column (as LangGraph's `setup` does). One transaction, so two processes starting at once do
/// not trip over each other. A database already set up is only read: opening it takes no write
/// lock, and works on a read-only file.
pub(crate) async fn setup(pool: &SqlitePool) -> Result<()> {
    let failed = |e| Error::driver("setup", e);
    if is_current(pool).await.map_err(failed)? {
        return Ok(());
    }
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(failed)?;
    // Prepared statements one by one rather than one script: a script's future cannot be shown
    // to be `Send`, which would make `connect`'s not `Send` either.
    for statement in CREATE_TABLES {
        sqlx::query(statement).execute(&mut *tx).await.map_err(failed)?;
    }
    let has_task_path: bool =
        sqlx::query_scalar("SELECT COUNT(*) > 0 FROM pragma_table_info('writes') WHERE name = 'task_path'")
            .fetch_one(&mut *tx)
            .await
            .map_err(failed)?;
    if !has_task_path {
        sqlx::query("ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''")
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
    }
    tx.commit().await.map_err(failed)
}

/// Whether both tables exist and `writes` has `task_path`.
async fn is_current(pool: &SqlitePool) -> std::result::Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('checkpoints', 'writes')) = 2 \
         AND EXISTS (SELECT 1 FROM pragma_table_info('writes') WHERE name = 'task_path')",
    )
    .fetch_one(pool)
    .await
}

#[cfg(test)]
mod tests {
    use crate::SqliteCheckpointer;

    /// Opening is a `Send` future, so it can run on any runtime thread (`tokio::spawn`, the
    /// Python bindings' runtime).
    #[test]
    fn connect_is_a_send_future() {
        fn send<T: Send>(_: T) {}
        send(SqliteCheckpointer::connect(":memory:"));
        send(async { SqliteCheckpointer::connect(":memory:").await.map(|s| s.pool().size()) });
    }
}
