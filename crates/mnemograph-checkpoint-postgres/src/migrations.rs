//! LangGraph's schema for Postgres, as its list of migrations: version `v` is the `v`-th entry,
//! recorded in `checkpoint_migrations` once applied, so that this crate's `setup` and Python's
//! `PostgresSaver.setup()` each find the other's work done.

use std::time::Duration;

use sqlx::{PgConnection, PgPool};

use crate::error::{Error, Result};

/// The migrations, in order; the index is the version. Each entry is one statement, safe to run
/// again (`IF NOT EXISTS`), because a process can stop between applying one and recording it.
pub(crate) const MIGRATIONS: [&str; 10] = [
    "CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT,
        type TEXT,
        checkpoint JSONB NOT NULL,
        metadata JSONB NOT NULL DEFAULT '{}',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id))",
    "CREATE TABLE IF NOT EXISTS checkpoint_blobs (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        channel TEXT NOT NULL,
        version TEXT NOT NULL,
        type TEXT NOT NULL,
        blob BYTEA,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version))",
    "CREATE TABLE IF NOT EXISTS checkpoint_writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        type TEXT,
        blob BYTEA NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx))",
    "ALTER TABLE checkpoint_blobs ALTER COLUMN blob DROP NOT NULL",
    // LangGraph keeps an empty slot here so that later version numbers stay where they were.
    "SELECT 1",
    // Not inside a transaction: CONCURRENTLY refuses one, and keeps writers going meanwhile.
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON checkpoints(thread_id)",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_idx ON checkpoint_blobs(thread_id)",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_idx ON checkpoint_writes(thread_id)",
    "ALTER TABLE checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT ''",
];

/// The session lock `setup` holds, so that two of this crate's processes migrate one after the
/// other. (Any fixed number: advisory locks are named by numbers.)
const SETUP_LOCK: i64 = 0x6d6e_656d_6f70_6731;

/// How long `setup` waits between attempts to take [`SETUP_LOCK`].
const LOCK_RETRY: Duration = Duration::from_millis(50);

/// Applies the migrations not yet recorded, each recorded right after it; returns how many.
pub(crate) async fn run(pool: &PgPool) -> Result<usize> {
    let mut conn = pool.acquire().await?;
    if current(&mut conn).await? {
        return Ok(0);
    }
    take_setup_lock(&mut conn).await?;
    let applied = apply(&mut conn).await;
    let unlocked = release_setup_lock(&mut conn).await;
    let applied = applied?;
    unlocked?;
    Ok(applied)
}

/// Takes [`SETUP_LOCK`] for this session, so that migrations of this crate's processes (the
/// checkpointer's and the store's) run one after the other.
pub(crate) async fn take_setup_lock(conn: &mut PgConnection) -> Result<()> {
    // Tried, not awaited in the server: `CREATE INDEX CONCURRENTLY` waits for every open
    // transaction to end, including a statement waiting for this lock, so a waiting `setup`
    // would deadlock with the one migrating.
    while !sqlx::query_scalar::<_, bool>("SELECT pg_try_advisory_lock($1)")
        .bind(SETUP_LOCK)
        .fetch_one(&mut *conn)
        .await?
    {
        tokio::time::sleep(LOCK_RETRY).await;
    }
    Ok(())
}

/// Releases what [`take_setup_lock`] took.
pub(crate) async fn release_setup_lock(conn: &mut PgConnection) -> Result<()> {
    sqlx::query("SELECT pg_advisory_unlock($1)").bind(SETUP_LOCK).execute(&mut *conn).await?;
    Ok(())
}

/// Whether the latest migration is recorded already (the usual case, checked without the lock).
async fn current(conn: &mut PgConnection) -> Result<bool> {
    let table: Option<String> =
        sqlx::query_scalar("SELECT to_regclass('checkpoint_migrations')::text").fetch_one(&mut *conn).await?;
    if table.is_none() {
        return Ok(false);
    }
    let latest: Option<i32> =
        sqlx::query_scalar("SELECT max(v) FROM checkpoint_migrations").fetch_one(&mut *conn).await?;
    Ok(latest.and_then(|v| usize::try_from(v).ok()) == Some(MIGRATIONS.len() - 1))
}

/// The migrations after the latest recorded one, on a connection holding the setup lock.
async fn apply(conn: &mut PgConnection) -> Result<usize> {
    migrate(conn, 0).await?;
    let latest: Option<i32> =
        sqlx::query_scalar("SELECT v FROM checkpoint_migrations ORDER BY v DESC LIMIT 1")
            .fetch_optional(&mut *conn)
            .await?;
    let next = match latest.map(|v| (v, usize::try_from(v))) {
        None | Some((_, Err(_))) => 0,
        Some((_, Ok(v))) if v < MIGRATIONS.len() => v + 1,
        Some((found, Ok(_))) => {
            return Err(Error::SchemaTooNew { found: found.into(), known: MIGRATIONS.len() - 1 })
        }
    };
    for version in next..MIGRATIONS.len() {
        migrate(conn, version).await?;
        // A Python `setup` racing this one may have recorded it first.
        sqlx::query("INSERT INTO checkpoint_migrations (v) VALUES ($1) ON CONFLICT (v) DO NOTHING")
            .bind(version as i32)
            .execute(&mut *conn)
            .await
            .map_err(|source| Error::Migrate { version, source })?;
    }
    Ok(MIGRATIONS.len() - next)
}

/// Runs migration `version` on its own, outside any transaction.
async fn migrate(conn: &mut PgConnection, version: usize) -> Result<()> {
    run_raw(conn, MIGRATIONS[version]).await.map_err(|source| Error::Migrate { version, source })
}

/// Runs `statement` as a simple query (no parameters, no prepared statement, no transaction).
/// Through the `Executor` trait rather than `RawSql::execute`, whose future is not `Send` for
/// every lifetime, which would keep `setup` out of `tokio::spawn`.
pub(crate) async fn run_raw(conn: &mut PgConnection, statement: &str) -> Result<(), sqlx::Error> {
    sqlx::Executor::execute(conn, sqlx::raw_sql(statement)).await.map(drop)
}
