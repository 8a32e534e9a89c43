//! One item at a time: `get`, `put`, `delete`, the sweep of expired rows, and decoding a row.

use std::time::{Duration, SystemTime};

use mnemograph_checkpoint::store::{item_from_row, validate_put, Item, StoreError};
use serde_json::Value;
use sqlx::SqliteConnection;

use super::{prefix_text, time, SqliteStore};
use crate::error::{Error, Result};

/// The columns [`decode`] reads, in its order; text and blob columns are cast so that rows
/// either language wrote decode alike (Python stores the value as a blob of JSON text).
pub(super) const ITEM_COLUMNS: &str =
    "prefix, key, CAST(value AS BLOB), CAST(created_at AS TEXT), CAST(updated_at AS TEXT)";

/// A row of [`ITEM_COLUMNS`].
pub(super) type ItemRow = (String, String, Vec<u8>, Option<String>, Option<String>);

/// A row of [`ITEM_COLUMNS`] and `ttl_minutes`, what `get` and `search` read.
pub(super) type TtlRow = (String, String, Vec<u8>, Option<String>, Option<String>, Option<f64>);

/// How many items one refresh statement updates: three bound values each, well under SQLite's
/// limit on bound values.
const KEYS_PER_REFRESH: usize = 300;

/// The SQL condition of a live row, with [`now_text`] bound: no expiry, or one still ahead.
pub(super) const LIVE: &str = "(expires_at IS NULL OR expires_at > ?)";

/// Now, as the `expires_at` column compares.
pub(super) fn now_text() -> String {
    time::format(SystemTime::now())
}

/// The item a row holds; a row that does not decode is [`Error::CorruptItem`], naming it.
pub(super) fn decode((prefix, key, value, created_at, updated_at): ItemRow) -> Result<Item> {
    let stamp = |text: String| time::parse(&text).ok_or_else(|| format!("`{text}` is not a timestamp"));
    Ok(item_from_row(&prefix, key, &value, created_at, updated_at, stamp)?)
}

pub(super) async fn get(store: &SqliteStore, namespace: &[String], key: &str) -> Result<Option<Item>> {
    let failed = |e| Error::driver("store get", e);
    let prefix = prefix_text(namespace);
    let row: Option<TtlRow> = sqlx::query_as(&format!(
        "SELECT {ITEM_COLUMNS}, ttl_minutes FROM store WHERE prefix = ? AND key = ? AND {LIVE}"
    ))
    .bind(&prefix)
    .bind(key)
    .bind(now_text())
    .fetch_optional(&store.pool)
    .await
    .map_err(failed)?;
    let Some((p, k, value, created_at, updated_at, ttl_minutes)) = row else { return Ok(None) };
    if let (true, Some(minutes)) = (store.ttl.refresh_on_read, ttl_minutes) {
        let expires = time::format(SystemTime::now() + minutes_to_duration(minutes));
        sqlx::query(
            "UPDATE store SET expires_at = ? WHERE prefix = ? AND key = ? AND ttl_minutes IS NOT NULL",
        )
        .bind(expires)
        .bind(&prefix)
        .bind(key)
        .execute(&store.pool)
        .await
        .map_err(failed)?;
    }
    decode((p, k, value, created_at, updated_at)).map(Some)
}

/// Pushes the expiry of the items of `keys` (prefix, key, the TTL in minutes they were read
/// with) out by their TTL again, as Python's store does for the items a search returns: one
/// statement for up to [`KEYS_PER_REFRESH`] items. An item rewritten with another TTL since the
/// read (its write set its expiry), or expired since, is left as it is.
pub(super) async fn refresh(store: &SqliteStore, keys: &[(String, String, f64)]) -> Result<()> {
    let now = SystemTime::now();
    for chunk in keys.chunks(KEYS_PER_REFRESH) {
        let rows = vec!["(?, ?, ?, ?)"; chunk.len()].join(", ");
        let sql = format!(
            "WITH r(p, k, minutes, until) AS (VALUES {rows}) \
             UPDATE store SET expires_at = r.until FROM r \
             WHERE store.prefix = r.p AND store.key = r.k AND store.ttl_minutes = r.minutes AND {LIVE}"
        );
        let mut statement = sqlx::query(&sql);
        for (prefix, key, minutes) in chunk {
            let expires = time::format(now + minutes_to_duration(*minutes));
            statement = statement.bind(prefix).bind(key).bind(minutes).bind(expires);
        }
        statement
            .bind(time::format(now))
            .execute(&store.pool)
            .await
            .map_err(|e| Error::driver("store search", e))?;
    }
    Ok(())
}

fn minutes_to_duration(minutes: f64) -> Duration {
    Duration::try_from_secs_f64(minutes * 60.0).unwrap_or(Duration::ZERO)
}

pub(super) async fn put(
    store: &SqliteStore,
    namespace: &[String],
    key: &str,
    value: Value,
    ttl: Option<Duration>,
) -> Result<(), StoreError> {
    validate_put(namespace, &value)?;
    // Embedded before the write lock is taken: the model may be slow or remote.
    let vectors = match &store.index {
        Some(index) => index.embed_fields(&value).await?,
        None => Vec::new(),
    };
    let bytes = serde_json::to_vec(&value).map_err(|e| StoreError::Backend(Box::new(e)))?;
    let now = time::unique_now();
    let ttl = ttl.or(store.ttl.default_ttl);
    let prefix = prefix_text(namespace);
    let failed = |e| Error::driver("store put", e);
    let mut tx = store.pool.begin_with("BEGIN IMMEDIATE").await.map_err(failed)?;
    if store.sweep_due() {
        sweep_in(&mut tx, store.has_vectors).await.map_err(failed)?;
    }
    // An upsert, not LangGraph's `INSERT OR REPLACE`: replacing keeps `created_at` (unless the
    // old item had expired), and the row is never deleted, so nothing cascades.
    sqlx::query(
        "INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) \
         VALUES (?, ?, ?, ?, ?, ?, ?) \
         ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value, \
         created_at = CASE WHEN store.expires_at IS NOT NULL AND store.expires_at <= excluded.updated_at \
         THEN excluded.created_at ELSE store.created_at END, \
         updated_at = excluded.updated_at, expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes",
    )
    .bind(&prefix)
    .bind(key)
    .bind(bytes.as_slice())
    .bind(time::format(now))
    .bind(time::format(now))
    .bind(ttl.map(|t| time::format(now + t)))
    .bind(ttl.map(|t| t.as_secs_f64() / 60.0))
    .execute(&mut *tx)
    .await
    .map_err(failed)?;
    if store.has_vectors {
        delete_vectors(&mut tx, &prefix, key).await.map_err(failed)?;
        for (field, vector) in &vectors {
            let blob: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
            sqlx::query(
                "INSERT INTO store_vectors (prefix, key, field_name, embedding, created_at, updated_at) \
                 VALUES (?, ?, ?, ?, ?, ?)",
            )
            .bind(&prefix)
            .bind(key)
            .bind(field)
            .bind(blob)
            .bind(time::format(now))
            .bind(time::format(now))
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        }
    }
    tx.commit().await.map_err(failed)?;
    Ok(())
}

pub(super) async fn delete(store: &SqliteStore, namespace: &[String], key: &str) -> Result<()> {
    let failed = |e| Error::driver("store delete", e);
    let prefix = prefix_text(namespace);
    let mut tx = store.pool.begin_with("BEGIN IMMEDIATE").await.map_err(failed)?;
    sqlx::query("DELETE FROM store WHERE prefix = ? AND key = ?")
        .bind(&prefix)
        .bind(key)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
    if store.has_vectors {
        delete_vectors(&mut tx, &prefix, key).await.map_err(failed)?;
    }
    tx.commit().await.map_err(failed)
}

/// The vectors of one item. Explicit, because a pool opened with foreign keys off (Python's
/// default) does not cascade.
async fn delete_vectors(conn: &mut SqliteConnection, prefix: &str, key: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM store_vectors WHERE prefix = ? AND key = ?")
        .bind(prefix)
        .bind(key)
        .execute(conn)
        .await
        .map(drop)
}

pub(super) async fn sweep(store: &SqliteStore) -> Result<u64> {
    let failed = |e| Error::driver("store sweep", e);
    let mut tx = store.pool.begin_with("BEGIN IMMEDIATE").await.map_err(failed)?;
    let removed = sweep_in(&mut tx, store.has_vectors).await.map_err(failed)?;
    tx.commit().await.map_err(failed)?;
    Ok(removed)
}

/// Deletes expired items, and vectors whose item is gone (Python's writers leave them behind
/// when foreign keys are off).
async fn sweep_in(conn: &mut SqliteConnection, has_vectors: bool) -> Result<u64, sqlx::Error> {
    let removed = sqlx::query("DELETE FROM store WHERE expires_at IS NOT NULL AND expires_at <= ?")
        .bind(now_text())
        .execute(&mut *conn)
        .await?
        .rows_affected();
    if has_vectors {
        sqlx::query(
            "DELETE FROM store_vectors WHERE NOT EXISTS \
             (SELECT 1 FROM store s WHERE s.prefix = store_vectors.prefix AND s.key = store_vectors.key)",
        )
        .execute(&mut *conn)
        .await?;
    }
    Ok(removed)
}
