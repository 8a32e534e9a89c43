//! The store's tables and migrations, exactly as LangGraph's `SqliteStore.setup()` numbers them,
//! so either language's `setup` finds a database the other created ready, and upgrades one it
//! left behind.

use sqlx::SqlitePool;

use crate::error::{Error, Result};

/// LangGraph's `MIGRATIONS`: version `i` is statement `i`, recorded in `store_migrations`.
const MIGRATIONS: [&str; 5] = [
    "CREATE TABLE IF NOT EXISTS store (
    prefix text NOT NULL,
    key text NOT NULL,
    value text NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key)
)",
    "CREATE INDEX IF NOT EXISTS store_prefix_idx ON store (prefix)",
    "ALTER TABLE store ADD COLUMN expires_at TIMESTAMP",
    "ALTER TABLE store ADD COLUMN ttl_minutes REAL",
    "CREATE INDEX IF NOT EXISTS idx_store_expires_at ON store (expires_at) WHERE expires_at IS NOT NULL",
];

/// LangGraph's `VECTOR_MIGRATIONS`, recorded in `vector_migrations`; applied by stores with an
/// index, as in Python.
const VECTOR_MIGRATIONS: [&str; 1] = ["CREATE TABLE IF NOT EXISTS store_vectors (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding BLOB,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE
)"];

/// Applies the migrations not yet recorded (and the vector ones when `vectors`), then says
/// whether the database has the `store_vectors` table. One `BEGIN IMMEDIATE` transaction: two
/// processes opening a fresh file at once cannot both run an `ALTER TABLE`.
pub(super) async fn setup(pool: &SqlitePool, vectors: bool) -> Result<bool> {
    let failed = |e| Error::driver("store setup", e);
    // A database already up to date is only read: opening it takes no write lock.
    if let Ok((store, vector)) = recorded(pool).await {
        if store == Some(MIGRATIONS.len() as i64 - 1)
            && (!vectors || vector == Some(VECTOR_MIGRATIONS.len() as i64 - 1))
        {
            return Ok(vector.is_some());
        }
    }
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(failed)?;
    let mut sets = vec![("store_migrations", &MIGRATIONS[..])];
    if vectors {
        sets.push(("vector_migrations", &VECTOR_MIGRATIONS[..]));
    }
    for (table, migrations) in sets {
        sqlx::query(&format!("CREATE TABLE IF NOT EXISTS {table} (v INTEGER PRIMARY KEY)"))
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        let done: Option<i64> = sqlx::query_scalar(&format!("SELECT MAX(v) FROM {table}"))
            .fetch_one(&mut *tx)
            .await
            .map_err(failed)?;
        let next = done.map_or(0, |v| usize::try_from(v + 1).unwrap_or(usize::MAX));
        for (v, statement) in migrations.iter().enumerate().skip(next) {
            sqlx::query(statement).execute(&mut *tx).await.map_err(failed)?;
            sqlx::query(&format!("INSERT INTO {table} (v) VALUES (?)"))
                .bind(v as i64)
                .execute(&mut *tx)
                .await
                .map_err(failed)?;
        }
    }
    let has_vectors: bool = sqlx::query_scalar(
        "SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'store_vectors'",
    )
    .fetch_one(&mut *tx)
    .await
    .map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    Ok(has_vectors)
}

/// The last migration recorded in each table; an error when `store_migrations` is missing.
async fn recorded(pool: &SqlitePool) -> std::result::Result<(Option<i64>, Option<i64>), sqlx::Error> {
    let store = sqlx::query_scalar("SELECT MAX(v) FROM store_migrations").fetch_one(pool).await?;
    let vector =
        sqlx::query_scalar("SELECT MAX(v) FROM vector_migrations").fetch_one(pool).await.unwrap_or(None);
    Ok((store, vector))
}
