//! The `store_vectors` table: which column type holds the embeddings, creating the table, writing
//! an item's vectors, and scoring items against a query vector.
//!
//! Both column types are read as `real[]` and written from `real[]` (pgvector casts either way),
//! so everything but the table's creation is the same SQL in both modes, and similarity is always
//! computed here, with the other stores' [`cosine_similarity`].

use std::collections::HashMap;

use mnemograph_checkpoint::store::cosine_similarity;
use sqlx::{PgConnection, PgPool};

use crate::error::{Error, Result};
use crate::migrations::run_raw;

/// How `store_vectors.embedding` holds vectors; see [`PostgresStore`](super::PostgresStore).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum VectorStorage {
    /// pgvector's `vector(dims)` (or `halfvec(dims)`, when Python created the table so): the
    /// table and `vector_migrations` exactly as LangGraph's `PostgresStore.setup()` leaves them,
    /// so Python's store with the same `dims` reads, ranks and writes the same vectors.
    Pgvector,
    /// `real[]`, for servers without the pgvector extension: the same table shape, its vectors
    /// readable by any SQL client but not by Python's store, whose `setup()` needs pgvector.
    RealArray,
}

/// LangGraph's `VECTOR_MIGRATIONS` with its defaults (`vector` type, cosine distance, an HNSW
/// index), `dims` filled in at `{dims}`; recorded in `vector_migrations` as Python records them.
const PGVECTOR_MIGRATIONS: [&str; 3] = [
    "DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN
        CREATE EXTENSION vector;
    END IF;
END $$;",
    "CREATE TABLE IF NOT EXISTS store_vectors (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding vector({dims}),
    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE
)",
    // Not inside a transaction: CONCURRENTLY refuses one.
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS store_vectors_embedding_idx ON store_vectors
    USING hnsw (embedding vector_cosine_ops)",
];

/// The table without pgvector. Nothing is recorded in `vector_migrations`: Python's `setup()` on
/// such a database then tries to install pgvector, and fails saying so, rather than believing
/// the table is its own.
const REAL_ARRAY_TABLE: &str = "CREATE TABLE IF NOT EXISTS store_vectors (
    prefix text NOT NULL,
    key text NOT NULL,
    field_name text NOT NULL,
    embedding real[],
    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE
)";

/// What the `store_vectors` table of the database holds, with the dimension a pgvector column
/// fixes; `None` when there is no such table.
///
/// # Errors
/// [`Error::UnknownVectorColumn`] for an `embedding` column of another type, or none.
pub(super) async fn existing(conn: &mut PgConnection) -> Result<Option<(VectorStorage, Option<usize>)>> {
    let table: Option<String> =
        sqlx::query_scalar("SELECT to_regclass('store_vectors')::text").fetch_one(&mut *conn).await?;
    if table.is_none() {
        return Ok(None);
    }
    let column: Option<(String, i32)> = sqlx::query_as(
        "SELECT t.typname::text, a.atttypmod FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
         WHERE a.attrelid = to_regclass('store_vectors') AND a.attname = 'embedding' AND NOT a.attisdropped",
    )
    .fetch_optional(&mut *conn)
    .await?;
    match column {
        Some((t, _)) if t == "_float4" => Ok(Some((VectorStorage::RealArray, None))),
        // pgvector keeps a column's dimension as its type modifier (-1 when it fixes none).
        Some((t, dims)) if t == "vector" || t == "halfvec" => {
            Ok(Some((VectorStorage::Pgvector, usize::try_from(dims).ok())))
        }
        other => Err(Error::UnknownVectorColumn {
            found: other.map_or_else(|| "no embedding column".to_owned(), |(t, _)| t),
        }),
    }
}

/// Creates `store_vectors` for vectors of `dims` numbers, on a connection holding the setup lock:
/// with pgvector's migrations when the server offers the extension, as `real[]` otherwise.
pub(super) async fn create(conn: &mut PgConnection, dims: usize) -> Result<VectorStorage> {
    let available: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')")
            .fetch_one(&mut *conn)
            .await?;
    if !available {
        run_raw(conn, REAL_ARRAY_TABLE).await.map_err(|source| Error::VectorSetup { source })?;
        return Ok(VectorStorage::RealArray);
    }
    run_raw(conn, "CREATE TABLE IF NOT EXISTS vector_migrations (v INTEGER PRIMARY KEY)")
        .await
        .map_err(|source| Error::VectorSetup { source })?;
    let latest: Option<i32> =
        sqlx::query_scalar("SELECT max(v) FROM vector_migrations").fetch_one(&mut *conn).await?;
    let next = latest.map_or(0, |v| usize::try_from(v + 1).unwrap_or(0));
    for (version, statement) in PGVECTOR_MIGRATIONS.iter().enumerate().skip(next) {
        let statement = statement.replace("{dims}", &dims.to_string());
        let failed = |source| Error::VectorSetup { source };
        run_raw(conn, &statement).await.map_err(failed)?;
        sqlx::query("INSERT INTO vector_migrations (v) VALUES ($1) ON CONFLICT (v) DO NOTHING")
            .bind(version as i32)
            .execute(&mut *conn)
            .await
            .map_err(failed)?;
    }
    Ok(VectorStorage::Pgvector)
}

/// Replaces the vectors of one item by `vectors` (field name, vector).
pub(super) async fn replace(
    conn: &mut PgConnection,
    prefix: &str,
    key: &str,
    vectors: &[(String, Vec<f32>)],
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM store_vectors WHERE prefix = $1 AND key = $2")
        .bind(prefix)
        .bind(key)
        .execute(&mut *conn)
        .await?;
    if vectors.is_empty() {
        return Ok(());
    }
    // One row per field; `real[]` is assigned to a pgvector column by pgvector's cast.
    let rows: Vec<String> = (0..vectors.len())
        .map(|i| format!("($1, $2, ${}, ${}::real[], now(), now())", 2 * i + 3, 2 * i + 4))
        .collect();
    let sql = format!(
        "INSERT INTO store_vectors (prefix, key, field_name, embedding, created_at, updated_at) VALUES {}",
        rows.join(", ")
    );
    let mut statement = sqlx::query(&sql).bind(prefix).bind(key);
    for (field, vector) in vectors {
        statement = statement.bind(field).bind(vector);
    }
    statement.execute(&mut *conn).await.map(drop)
}

/// How many items' vectors one statement reads.
const KEYS_PER_READ: usize = 1000;

/// The best cosine similarity to `query` among the vectors of each item of `keys` (its prefix
/// and key), by `(prefix, key)`. Only those items' vectors are read, so a filter that keeps few
/// items keeps the read small. A vector of another length (written with another model) scores
/// nothing rather than failing the search.
pub(super) async fn best_scores(
    pool: &PgPool,
    keys: &[(String, String)],
    query: &[f32],
) -> Result<HashMap<(String, String), f64>> {
    let mut best: HashMap<(String, String), f64> = HashMap::new();
    for chunk in keys.chunks(KEYS_PER_READ) {
        let (prefixes, names): (Vec<&str>, Vec<&str>) =
            chunk.iter().map(|(p, k)| (p.as_str(), k.as_str())).unzip();
        let rows: Vec<(String, String, Option<Vec<f32>>)> = sqlx::query_as(
            "SELECT v.prefix, v.key, v.embedding::real[] FROM store_vectors v
             JOIN unnest($1::text[], $2::text[]) AS k(prefix, key) ON v.prefix = k.prefix AND v.key = k.key",
        )
        .bind(&prefixes)
        .bind(&names)
        .fetch_all(pool)
        .await?;
        for (prefix, key, vector) in rows {
            let Some(vector) = vector.filter(|v| v.len() == query.len()) else { continue };
            let score = cosine_similarity(query, &vector);
            best.entry((prefix, key)).and_modify(|s| *s = s.max(score)).or_insert(score);
        }
    }
    Ok(best)
}
