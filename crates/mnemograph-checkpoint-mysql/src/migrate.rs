//! Schema migrations: LangGraph's MySQL saver's 22 migrations, recorded the same way.
//!
//! The list is LangGraph's `MIGRATIONS` in the same order with the same version numbers, and each
//! applied version is recorded in `checkpoint_migrations` exactly as the Python `setup()` does.
//! Running the Python `setup()` on a database this crate migrated is therefore a no-op, and vice
//! versa.
//!
//! Statements that differ between MySQL and MariaDB use executable comments:
//! `/*!50700 …*/` runs on MySQL only (MariaDB deliberately ignores MySQL-versioned comments from
//! 5.7 on) and `/*M! …*/` runs on MariaDB only. MySQL keeps `checkpoint_ns_hash` a generated column
//! until v19–21 turn it into a plain one, which MariaDB had from the start (it cannot put a stored
//! generated column in a primary key).

use sqlx::mysql::{MySqlConnection, MySqlDatabaseError};
use sqlx::{Connection, MySqlPool};

use crate::error::{Error, Result};

/// The table recording applied migrations (shared with LangGraph).
pub(crate) const MIGRATIONS_TABLE: &str = "checkpoint_migrations";

/// How long `setup` waits for another process's `setup` to finish.
pub(crate) const LOCK_WAIT_SECONDS: u32 = 120;

/// Migration 0, shared by the full and the shallow saver.
const CREATE_MIGRATIONS_TABLE: &str =
    "CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY)";

/// The full saver's migrations; the index is the version.
pub(crate) const FULL: &[&str] = &[
    CREATE_MIGRATIONS_TABLE,
    // v1-3: the original tables.
    "CREATE TABLE IF NOT EXISTS checkpoints (
        thread_id VARCHAR(150) NOT NULL,
        checkpoint_ns VARCHAR(150) NOT NULL DEFAULT '',
        checkpoint_id VARCHAR(150) NOT NULL,
        parent_checkpoint_id VARCHAR(150),
        type VARCHAR(150),
        checkpoint JSON NOT NULL,
        metadata JSON NOT NULL DEFAULT ('{}'),
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
    )",
    "CREATE TABLE IF NOT EXISTS checkpoint_blobs (
        thread_id VARCHAR(150) NOT NULL,
        checkpoint_ns VARCHAR(150) NOT NULL DEFAULT '',
        channel VARCHAR(150) NOT NULL,
        version VARCHAR(150) NOT NULL,
        type VARCHAR(150) NOT NULL,
        `blob` LONGBLOB,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
    )",
    "CREATE TABLE IF NOT EXISTS checkpoint_writes (
        thread_id VARCHAR(150) NOT NULL,
        checkpoint_ns VARCHAR(150) NOT NULL DEFAULT '',
        checkpoint_id VARCHAR(150) NOT NULL,
        task_id VARCHAR(150) NOT NULL,
        idx INTEGER NOT NULL,
        channel VARCHAR(150) NOT NULL,
        type VARCHAR(150),
        `blob` LONGBLOB NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    )",
    // v4: blobs become nullable (LangGraph's "empty" channels).
    "ALTER TABLE checkpoint_blobs MODIFY COLUMN `blob` LONGBLOB",
    // v5-8: lookup indexes.
    "CREATE INDEX checkpoints_thread_id_idx ON checkpoints (thread_id)",
    "CREATE INDEX checkpoint_blobs_thread_id_idx ON checkpoint_blobs (thread_id)",
    "CREATE INDEX checkpoint_writes_thread_id_idx ON checkpoint_writes (thread_id)",
    "CREATE INDEX checkpoints_checkpoint_id_idx ON checkpoints (checkpoint_id)",
    // v9-11: room for nested subgraph namespaces.
    "ALTER TABLE checkpoints MODIFY COLUMN `checkpoint_ns` VARCHAR(255) NOT NULL DEFAULT ''",
    "ALTER TABLE checkpoint_blobs MODIFY COLUMN `checkpoint_ns` VARCHAR(255) NOT NULL DEFAULT ''",
    "ALTER TABLE checkpoint_writes MODIFY COLUMN `checkpoint_ns` VARCHAR(255) NOT NULL DEFAULT ''",
    // v12-14: namespaces up to 2000 characters, too long for a key: dropped from the keys.
    "ALTER TABLE checkpoints
        DROP PRIMARY KEY,
        ADD PRIMARY KEY (thread_id, checkpoint_id),
        MODIFY COLUMN `checkpoint_ns` VARCHAR(2000) NOT NULL DEFAULT ''",
    "ALTER TABLE checkpoint_blobs
        DROP PRIMARY KEY,
        ADD PRIMARY KEY (thread_id, channel, version),
        MODIFY COLUMN `checkpoint_ns` VARCHAR(2000) NOT NULL DEFAULT ''",
    "ALTER TABLE checkpoint_writes
        DROP PRIMARY KEY,
        ADD PRIMARY KEY (thread_id, checkpoint_id, task_id, idx),
        MODIFY COLUMN `checkpoint_ns` VARCHAR(2000) NOT NULL DEFAULT ''",
    // v15-17: the namespace back in the keys, as its MD5.
    "ALTER TABLE checkpoints
        /*!50700 ADD COLUMN checkpoint_ns_hash BINARY(16) AS (UNHEX(MD5(checkpoint_ns))) STORED,*/
        /*M! ADD COLUMN checkpoint_ns_hash BINARY(16),*/
        DROP PRIMARY KEY,
        ADD PRIMARY KEY (thread_id, checkpoint_ns_hash, checkpoint_id)",
    "ALTER TABLE checkpoint_blobs
        /*!50700 ADD COLUMN checkpoint_ns_hash BINARY(16) AS (UNHEX(MD5(checkpoint_ns))) STORED,*/
        /*M! ADD COLUMN checkpoint_ns_hash BINARY(16),*/
        DROP PRIMARY KEY,
        ADD PRIMARY KEY (thread_id, checkpoint_ns_hash, channel, version)",
    "ALTER TABLE checkpoint_writes
        /*!50700 ADD COLUMN checkpoint_ns_hash BINARY(16) AS (UNHEX(MD5(checkpoint_ns))) STORED,*/
        /*M! ADD COLUMN checkpoint_ns_hash BINARY(16),*/
        DROP PRIMARY KEY,
        ADD PRIMARY KEY (thread_id, checkpoint_ns_hash, checkpoint_id, task_id, idx)",
    // v18
    "ALTER TABLE checkpoint_writes ADD COLUMN task_path VARCHAR(2000) NOT NULL DEFAULT ''",
    // v19-21: plain hash columns everywhere; the writer computes the hash.
    "ALTER TABLE checkpoints MODIFY COLUMN checkpoint_ns_hash BINARY(16)",
    "ALTER TABLE checkpoint_blobs MODIFY COLUMN checkpoint_ns_hash BINARY(16)",
    "ALTER TABLE checkpoint_writes MODIFY COLUMN checkpoint_ns_hash BINARY(16)",
];

/// LangGraph's shallow saver's migrations: the same table names with one row per thread and
/// namespace, so it lives in a database of its own (as in Python, which shares
/// `checkpoint_migrations` between the two too).
pub(crate) const SHALLOW: &[&str] = &[
    CREATE_MIGRATIONS_TABLE,
    "CREATE TABLE IF NOT EXISTS checkpoints (
        thread_id VARCHAR(150) NOT NULL,
        checkpoint_ns VARCHAR(2000) NOT NULL DEFAULT '',
        /*!50700 checkpoint_ns_hash BINARY(16) AS (UNHEX(MD5(checkpoint_ns))) STORED,*/
        /*M! checkpoint_ns_hash BINARY(16),*/
        type VARCHAR(150),
        checkpoint JSON NOT NULL,
        metadata JSON NOT NULL DEFAULT ('{}'),
        PRIMARY KEY (thread_id, checkpoint_ns_hash)
    )",
    "CREATE TABLE IF NOT EXISTS checkpoint_blobs (
        thread_id VARCHAR(150) NOT NULL,
        checkpoint_ns VARCHAR(2000) NOT NULL DEFAULT '',
        /*!50700 checkpoint_ns_hash BINARY(16) AS (UNHEX(MD5(checkpoint_ns))) STORED,*/
        /*M! checkpoint_ns_hash BINARY(16),*/
        channel VARCHAR(150) NOT NULL,
        type VARCHAR(150) NOT NULL,
        `blob` LONGBLOB,
        PRIMARY KEY (thread_id, checkpoint_ns_hash, channel)
    )",
    "CREATE TABLE IF NOT EXISTS checkpoint_writes (
        thread_id VARCHAR(150) NOT NULL,
        checkpoint_ns VARCHAR(2000) NOT NULL DEFAULT '',
        /*!50700 checkpoint_ns_hash BINARY(16) AS (UNHEX(MD5(checkpoint_ns))) STORED,*/
        /*M! checkpoint_ns_hash BINARY(16),*/
        checkpoint_id VARCHAR(150) NOT NULL,
        task_id VARCHAR(150) NOT NULL,
        idx INTEGER NOT NULL,
        channel VARCHAR(150) NOT NULL,
        type VARCHAR(150),
        `blob` LONGBLOB NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns_hash, checkpoint_id, task_id, idx)
    )",
    "CREATE INDEX checkpoints_thread_id_idx ON checkpoints (thread_id)",
    "CREATE INDEX checkpoint_blobs_thread_id_idx ON checkpoint_blobs (thread_id)",
    "CREATE INDEX checkpoint_writes_thread_id_idx ON checkpoint_writes (thread_id)",
    "ALTER TABLE checkpoint_writes ADD COLUMN task_path VARCHAR(2000) NOT NULL DEFAULT ''",
    "ALTER TABLE checkpoints MODIFY COLUMN checkpoint_ns_hash BINARY(16)",
    "ALTER TABLE checkpoint_blobs MODIFY COLUMN checkpoint_ns_hash BINARY(16)",
    "ALTER TABLE checkpoint_writes MODIFY COLUMN checkpoint_ns_hash BINARY(16)",
];

/// Which saver a migration list is for; the two share table names, so each checks that the
/// `checkpoints` table it finds is its own before changing anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// [`FULL`]: `checkpoints` has a `checkpoint_id` column.
    Full,
    /// [`SHALLOW`]: it has none.
    Shallow,
}

/// Applies the migrations of `list` that `checkpoint_migrations` does not record yet, holding a
/// server-wide lock so that concurrent `setup`s run one after the other. Returns how many were
/// applied.
///
/// The lock is `GET_LOCK` on a name derived from the current database, taken on one connection
/// that runs every statement: the lock belongs to that session, and the server releases it if the
/// process dies.
pub(crate) async fn run(pool: &MySqlPool, layout: Layout) -> Result<usize> {
    let list = match layout {
        Layout::Full => FULL,
        Layout::Shallow => SHALLOW,
    };
    let mut conn = pool.acquire().await?;
    let lock: Option<i64> =
        sqlx::query_scalar("SELECT GET_LOCK(CONCAT(?, MD5(COALESCE(DATABASE(), ''))), ?)")
            .bind(LOCK_PREFIX)
            .bind(LOCK_WAIT_SECONDS)
            .fetch_one(&mut *conn)
            .await?;
    if lock != Some(1) {
        return Err(Error::SetupLock {
            name: format!("{LOCK_PREFIX}<md5 of the database name>"),
            seconds: LOCK_WAIT_SECONDS,
        });
    }
    let applied = match check_layout(&mut conn, layout).await {
        Ok(()) => apply(&mut conn, list).await,
        Err(e) => Err(e),
    };
    let released = sqlx::query("DO RELEASE_LOCK(CONCAT(?, MD5(COALESCE(DATABASE(), ''))))")
        .bind(LOCK_PREFIX)
        .execute(&mut *conn)
        .await;
    if released.is_err() {
        // Ending the session is the other way to release a named lock; never hand a connection
        // that may still hold it back to the pool.
        let _ = conn.detach().close().await;
    }
    applied
}

/// Prefix of the `GET_LOCK` name; the MD5 of the database name follows (names are limited to 64
/// characters, database names alone may have 64).
const LOCK_PREFIX: &str = "checkpoint_migrations:";

async fn apply(conn: &mut MySqlConnection, list: &[&str]) -> Result<usize> {
    ddl(conn, 0, list[0]).await?;
    let current: Option<i64> =
        sqlx::query_scalar(&format!("SELECT v FROM {MIGRATIONS_TABLE} ORDER BY v DESC LIMIT 1"))
            .fetch_optional(&mut *conn)
            .await?;
    let first = current.map_or(0, |v| usize::try_from(v + 1).unwrap_or(0));
    let mut applied = 0;
    for (version, statement) in list.iter().enumerate().skip(first) {
        // Version 0 was run above; it is recorded like the others, as Python does.
        if version > 0 {
            ddl(conn, version, statement).await?;
        }
        // DDL commits implicitly, so a crash here leaves a migration applied but unrecorded; the
        // next `setup` then meets "duplicate column/key" errors, which `ddl` accepts.
        sqlx::query(&format!("INSERT IGNORE INTO {MIGRATIONS_TABLE} (v) VALUES (?)"))
            .bind(version as u64)
            .execute(&mut *conn)
            .await?;
        applied += 1;
        tracing::debug!(version, "applied checkpoint migration");
    }
    Ok(applied)
}

/// `Err(Schema)` when `checkpoints` exists with the other saver's layout: migrating it would
/// mangle it (the full list would shrink the shallow table's namespace column, and the shallow
/// list, finding a higher version recorded, would do nothing and leave the wrong tables).
async fn check_layout(conn: &mut MySqlConnection, layout: Layout) -> Result<()> {
    let (columns, with_id): (i64, i64) = sqlx::query_as(
        "SELECT COUNT(*), CAST(COALESCE(SUM(COLUMN_NAME = 'checkpoint_id'), 0) AS SIGNED) \
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'checkpoints'",
    )
    .fetch_one(&mut *conn)
    .await?;
    if columns > 0 && (with_id > 0) != (layout == Layout::Full) {
        return Err(Error::Schema { table: "checkpoints", column: "checkpoint_id" });
    }
    Ok(())
}

/// Runs one migration statement over the text protocol (DDL gains nothing from being prepared).
async fn ddl(conn: &mut MySqlConnection, version: usize, statement: &str) -> Result<()> {
    match sqlx::raw_sql(statement).execute(&mut *conn).await {
        Ok(_) => Ok(()),
        Err(err) if already_applied(&err) => {
            tracing::warn!(version, "checkpoint migration was applied but not recorded; recording it");
            Ok(())
        }
        Err(source) => Err(Error::Migrate { version, source }),
    }
}

/// Whether `err` says the change exists already: ER_DUP_FIELDNAME (1060) or ER_DUP_KEYNAME (1061).
///
/// Every migration is a single statement, and InnoDB applies a single `ALTER TABLE` atomically, so
/// one of these errors means the whole statement took effect in an earlier run.
fn already_applied(err: &sqlx::Error) -> bool {
    let number =
        err.as_database_error().and_then(|e| e.try_downcast_ref::<MySqlDatabaseError>()).map(|e| e.number());
    matches!(number, Some(1060 | 1061))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_22_migrations_like_langgraph() {
        assert_eq!(FULL.len(), 22);
        assert!(FULL[0].contains(MIGRATIONS_TABLE));
        // The MySQL/MariaDB split is only in v15-17.
        let split: Vec<usize> = (0..FULL.len()).filter(|&v| FULL[v].contains("/*M!")).collect();
        assert_eq!(split, [15, 16, 17]);
        assert!(FULL[18].contains("task_path"));
        assert_eq!(SHALLOW.len(), 11);
        assert!(SHALLOW[7].contains("task_path"));
    }
}
