//! The store's table and migrations, exactly as LangGraph's `PostgresStore.setup()` numbers them
//! in `store_migrations`, so either language's `setup` finds a database the other created ready,
//! and upgrades one it left behind.

use sqlx::{PgConnection, PgPool};

use super::vectors::{self, VectorStorage};
use crate::error::{Error, Result};
use crate::migrations::{release_setup_lock, run_raw, take_setup_lock};

/// LangGraph's store `MIGRATIONS`: version `i` is statement `i`. Each is safe to run again (`IF
/// NOT EXISTS`), because a process can stop between applying one and recording it. The vector
/// table is [`vectors`]' job.
const MIGRATIONS: [&str; 4] = [
    "CREATE TABLE IF NOT EXISTS store (
        prefix text NOT NULL,
        key text NOT NULL,
        value jsonb NOT NULL,
        created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
        updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
        PRIMARY KEY (prefix, key))",
    // `text_pattern_ops` serves the anchored `LIKE` of a namespace prefix. Not inside a
    // transaction: CONCURRENTLY refuses one, and keeps writers going meanwhile.
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS store_prefix_idx ON store USING btree (prefix text_pattern_ops)",
    "ALTER TABLE store
        ADD COLUMN IF NOT EXISTS expires_at TIMESTAMP WITH TIME ZONE,
        ADD COLUMN IF NOT EXISTS ttl_minutes INT",
    "CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at) WHERE expires_at IS NOT NULL",
];

/// Applies the migrations not yet recorded in `store_migrations`, each recorded right after it,
/// and, for a store whose index embeds `dims` numbers, creates `store_vectors` when missing.
/// Returns how the database keeps vectors; `None` when it has no `store_vectors`.
///
/// # Errors
/// [`Error::VectorDims`] when the pgvector column holds vectors of another length than `dims`.
pub(super) async fn setup(pool: &PgPool, dims: Option<usize>) -> Result<Option<VectorStorage>> {
    let mut conn = pool.acquire().await?;
    // A database already up to date is only read: opening it takes no lock.
    let current = latest(&mut conn).await?.is_some_and(|v| v == MIGRATIONS.len() as i64 - 1);
    let mut found = vectors::existing(&mut conn).await?;
    if !current || (dims.is_some() && found.is_none()) {
        take_setup_lock(&mut conn).await?;
        let applied = apply(&mut conn, dims).await;
        let unlocked = release_setup_lock(&mut conn).await;
        found = applied?;
        unlocked?;
    }
    if let (Some(index), Some((VectorStorage::Pgvector, Some(column)))) = (dims, found) {
        if index != column {
            return Err(Error::VectorDims { column, index });
        }
    }
    Ok(found.map(|(storage, _)| storage))
}

/// The store migrations, then the vector table when `dims` asks for one, on a connection
/// holding the setup lock.
async fn apply(
    conn: &mut PgConnection,
    dims: Option<usize>,
) -> Result<Option<(VectorStorage, Option<usize>)>> {
    apply_store(conn).await?;
    // Read again under the lock: another process may have created it meanwhile.
    let found = vectors::existing(conn).await?;
    match (found, dims) {
        (None, Some(dims)) => Ok(Some((vectors::create(conn, dims).await?, Some(dims)))),
        (found, _) => Ok(found),
    }
}

/// The last migration recorded; `None` when there is no `store_migrations` table or no row.
async fn latest(conn: &mut PgConnection) -> Result<Option<i64>> {
    let table: Option<String> =
        sqlx::query_scalar("SELECT to_regclass('store_migrations')::text").fetch_one(&mut *conn).await?;
    if table.is_none() {
        return Ok(None);
    }
    let latest: Option<i32> =
        sqlx::query_scalar("SELECT max(v) FROM store_migrations").fetch_one(&mut *conn).await?;
    Ok(latest.map(i64::from))
}

/// The migrations after the latest recorded one, on a connection holding the setup lock.
async fn apply_store(conn: &mut PgConnection) -> Result<()> {
    run_raw(conn, "CREATE TABLE IF NOT EXISTS store_migrations (v INTEGER PRIMARY KEY)").await?;
    let next = match latest(conn).await? {
        None => 0,
        Some(v) if v < MIGRATIONS.len() as i64 => usize::try_from(v + 1).unwrap_or(0),
        Some(found) => return Err(Error::StoreSchemaTooNew { found, known: MIGRATIONS.len() - 1 }),
    };
    for (version, statement) in MIGRATIONS.iter().enumerate().skip(next) {
        let failed = |source| Error::Migrate { version, source };
        run_raw(conn, statement).await.map_err(failed)?;
        // A Python `setup` racing this one may have recorded it first.
        sqlx::query("INSERT INTO store_migrations (v) VALUES ($1) ON CONFLICT (v) DO NOTHING")
            .bind(version as i32)
            .execute(&mut *conn)
            .await
            .map_err(failed)?;
    }
    Ok(())
}
