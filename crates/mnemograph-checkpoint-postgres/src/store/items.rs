//! One item at a time: `get`, `put`, `delete`, the sweep of expired rows, and decoding a row.

use std::time::{Duration, UNIX_EPOCH};

use mnemograph_checkpoint::store::{item_from_row, validate_put, Item, StoreError};
use serde_json::Value;
use sqlx::PgPool;

use super::{has_nul, prefix_text, vectors, PostgresStore};
use crate::error::{Error, Result};

/// The columns [`decode`] reads, in its order: the value as JSON text, and the timestamps as
/// microseconds since the epoch, which need no date type in the driver.
pub(super) const ITEM_COLUMNS: &str = "prefix, key, value::text, \
     (EXTRACT(EPOCH FROM created_at) * 1000000)::int8, (EXTRACT(EPOCH FROM updated_at) * 1000000)::int8";

/// A row of [`ITEM_COLUMNS`].
pub(super) type ItemRow = (String, String, String, Option<i64>, Option<i64>);

/// The SQL condition of a live row: no expiry, or one still ahead on the server's clock.
pub(super) const LIVE: &str = "(expires_at IS NULL OR expires_at > now())";

/// The item a row holds; a row that does not decode is [`Error::CorruptItem`], naming it.
pub(super) fn decode((prefix, key, value, created_at, updated_at): ItemRow) -> Result<Item> {
    let stamp = |micros: i64| {
        let offset = Duration::from_micros(micros.unsigned_abs());
        let t = if micros >= 0 { UNIX_EPOCH.checked_add(offset) } else { UNIX_EPOCH.checked_sub(offset) };
        t.ok_or_else(|| "is out of range".to_owned())
    };
    Ok(item_from_row(&prefix, key, value.as_bytes(), created_at, updated_at, stamp)?)
}

pub(super) async fn get(store: &PostgresStore, namespace: &[String], key: &str) -> Result<Option<Item>> {
    if has_nul(key) {
        return Ok(None);
    }
    // One statement: the read, and the refresh of a live item's expiry by its whole minutes, as
    // Python's store refreshes it. Both see the row as it was, so the read is unaffected.
    let row: Option<ItemRow> = sqlx::query_as(&format!(
        "WITH refreshed AS (
             UPDATE store SET expires_at = now() + make_interval(mins => ttl_minutes)
             WHERE $3 AND prefix = $1 AND key = $2 AND ttl_minutes IS NOT NULL AND {LIVE}
             RETURNING 1)
         SELECT {ITEM_COLUMNS} FROM store WHERE prefix = $1 AND key = $2 AND {LIVE}"
    ))
    .bind(prefix_text(namespace))
    .bind(key)
    .bind(store.ttl.refresh_on_read)
    .fetch_optional(&store.pool)
    .await?;
    row.map(decode).transpose()
}

pub(super) async fn put(
    store: &PostgresStore,
    namespace: &[String],
    key: &str,
    value: Value,
    ttl: Option<Duration>,
) -> Result<(), StoreError> {
    validate_put(namespace, &value)?;
    let prefix = prefix_text(namespace);
    if has_nul(key) || holds_nul(&value) {
        return Err(Error::NulInItem { namespace: prefix, key: key.to_owned() }.into());
    }
    let text = serde_json::to_string(&value).map_err(|e| StoreError::Backend(Box::new(e)))?;
    // Embedded before any statement: the model may be slow or remote.
    let embedded = embed(store, &value).await?;
    let ttl = ttl.or(store.ttl.default_ttl);
    if store.sweep_due() {
        sweep(&store.pool).await?;
    }
    // An upsert, as LangGraph's: replacing keeps `created_at`, unless the old item had expired
    // (it was gone for every reader, so this write creates the item anew). One clock reading
    // stamps the row, so a fresh item's `created_at` equals its `updated_at`.
    let upsert = sqlx::query(
        "WITH clock AS (SELECT clock_timestamp() AS now)
         INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)
         SELECT $1, $2, $3::jsonb, now, now, now + make_interval(secs => $4), $5 FROM clock
         ON CONFLICT (prefix, key) DO UPDATE SET value = excluded.value,
             created_at = CASE WHEN store.expires_at IS NOT NULL AND store.expires_at <= excluded.updated_at
                 THEN excluded.created_at ELSE store.created_at END,
             updated_at = excluded.updated_at, expires_at = excluded.expires_at,
             ttl_minutes = excluded.ttl_minutes",
    )
    .bind(&prefix)
    .bind(key)
    .bind(text)
    .bind(ttl.map(|t| t.as_secs_f64()))
    .bind(ttl.map(whole_minutes));
    if store.vectors.is_none() {
        upsert.execute(&store.pool).await.map_err(Error::from)?;
        return Ok(());
    }
    // The item and its vectors change together: no search sees the new value with old vectors.
    let mut tx = store.pool.begin().await.map_err(Error::from)?;
    upsert.execute(&mut *tx).await.map_err(Error::from)?;
    vectors::replace(&mut tx, &prefix, key, &embedded).await.map_err(Error::from)?;
    tx.commit().await.map_err(Error::from)?;
    Ok(())
}

/// The vectors of `value` under the store's index: one per index field present in it, named by
/// the field; none without an index.
async fn embed(store: &PostgresStore, value: &Value) -> Result<Vec<(String, Vec<f32>)>, StoreError> {
    match &store.index {
        Some(index) => index.embed_fields(value).await,
        None => Ok(Vec::new()),
    }
}

/// Pushes the expiry of the live items of `keys` (prefix, key) that have a TTL out by it again,
/// as Python's store does for the items a search returns.
pub(super) async fn refresh(store: &PostgresStore, keys: &[(String, String)]) -> Result<()> {
    let (prefixes, names): (Vec<&str>, Vec<&str>) =
        keys.iter().map(|(p, k)| (p.as_str(), k.as_str())).unzip();
    sqlx::query(&format!(
        "UPDATE store SET expires_at = now() + make_interval(mins => ttl_minutes)
         FROM unnest($1::text[], $2::text[]) AS k(prefix, key)
         WHERE store.prefix = k.prefix AND store.key = k.key AND ttl_minutes IS NOT NULL AND {LIVE}"
    ))
    .bind(&prefixes)
    .bind(&names)
    .execute(&store.pool)
    .await?;
    Ok(())
}

/// `ttl` as the `ttl_minutes` column holds it: whole minutes, rounded up so that a refresh never
/// gives an item less time than its write did.
fn whole_minutes(ttl: Duration) -> i32 {
    i32::try_from(ttl.as_nanos().div_ceil(60_000_000_000)).unwrap_or(i32::MAX)
}

/// Whether a string or object key anywhere in `value` holds U+0000, which JSONB refuses.
fn holds_nul(value: &Value) -> bool {
    match value {
        Value::String(s) => has_nul(s),
        Value::Array(items) => items.iter().any(holds_nul),
        Value::Object(map) => map.iter().any(|(k, v)| has_nul(k) || holds_nul(v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

pub(super) async fn delete(store: &PostgresStore, namespace: &[String], key: &str) -> Result<()> {
    if has_nul(key) {
        return Ok(());
    }
    sqlx::query("DELETE FROM store WHERE prefix = $1 AND key = $2")
        .bind(prefix_text(namespace))
        .bind(key)
        .execute(&store.pool)
        .await?;
    Ok(())
}

/// Deletes the expired items, as LangGraph's `sweep_ttl` does; returns how many.
pub(super) async fn sweep(pool: &PgPool) -> Result<u64> {
    let done = sqlx::query("DELETE FROM store WHERE expires_at IS NOT NULL AND expires_at <= now()")
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ttl_minutes_round_up() {
        let minutes = |secs: f64| whole_minutes(Duration::from_secs_f64(secs));
        assert_eq!(minutes(0.0), 0);
        assert_eq!(minutes(0.5), 1);
        assert_eq!(minutes(60.0), 1);
        assert_eq!(minutes(60.001), 2);
        assert_eq!(minutes(90.0), 2);
        assert_eq!(minutes(3600.0), 60);
        assert_eq!(whole_minutes(Duration::MAX), i32::MAX);
    }

    #[test]
    fn nul_is_found_in_keys_and_nested_strings() {
        assert!(!holds_nul(&json!({"a": ["b", {"c": 1}], "d": null})));
        assert!(holds_nul(&json!({"a": ["b", {"c": "x\u{0}"}]})));
        assert!(holds_nul(&json!({"a\u{0}": 1})));
    }
}
