//! Reads over many items: `search` (filtered, optionally ranked by similarity), `count` and
//! `list_namespaces`.

use std::collections::HashMap;

use mnemograph_checkpoint::store::{
    cosine_similarity, matches_filter, validate_filter, DynEmbeddings, ListNamespaces, SearchItem,
    SearchQuery, StoreError,
};

use super::items::{decode, now_text, refresh, TtlRow, ITEM_COLUMNS, LIVE};
use super::{under, SqliteStore};
use crate::error::{Error, Result};

pub(super) async fn search(
    store: &SqliteStore,
    namespace_prefix: &[String],
    query: SearchQuery,
) -> Result<Vec<SearchItem>, StoreError> {
    if let Some(filter) = &query.filter {
        validate_filter(filter)?;
    }
    let query_vector = match (&store.index, &query.query) {
        (Some(index), Some(q)) => {
            Some(DynEmbeddings::embed_query(&*index.embed, q).await.map_err(StoreError::Embedding)?)
        }
        _ => None,
    };
    let failed = |e| Error::driver("store search", e);
    let (condition, args) = under(namespace_prefix);
    // Newest write first: `updated_at` is unique among one process's writes; `rowid` orders the
    // rest (rows of the same second that SQLite's CURRENT_TIMESTAMP stamped, say).
    let mut sql = format!(
        "SELECT {ITEM_COLUMNS}, ttl_minutes FROM store WHERE {condition} AND {LIVE} \
         ORDER BY updated_at DESC, rowid DESC"
    );
    // Without a filter or ranking, SQLite can page; otherwise every candidate is needed.
    let pages_in_sql = query.filter.is_none() && query_vector.is_none();
    if pages_in_sql {
        sql.push_str(" LIMIT ? OFFSET ?");
    }
    let mut statement = sqlx::query_as::<_, TtlRow>(&sql);
    for arg in &args {
        statement = statement.bind(arg);
    }
    statement = statement.bind(now_text());
    if pages_in_sql {
        statement = statement
            .bind(i64::try_from(query.limit).unwrap_or(i64::MAX))
            .bind(i64::try_from(query.offset).unwrap_or(i64::MAX));
    }
    let rows = statement.fetch_all(&store.pool).await.map_err(failed)?;
    // The TTL of each item that has one, by (prefix, key), for the refresh of those returned.
    let mut ttls: HashMap<(String, String), f64> = HashMap::new();
    let mut items = Vec::with_capacity(rows.len());
    for (prefix, key, value, created_at, updated_at, ttl_minutes) in rows {
        let item = decode((prefix, key, value, created_at, updated_at))?;
        if let Some(filter) = &query.filter {
            if !matches_filter(&item.value, filter)? {
                continue;
            }
        }
        if let Some(minutes) = ttl_minutes {
            ttls.insert((item.namespace.join("."), item.key.clone()), minutes);
        }
        items.push(item);
    }
    let Some(query_vector) = query_vector else {
        let page = if pages_in_sql {
            items
        } else {
            items.into_iter().skip(query.offset).take(query.limit).collect()
        };
        let page: Vec<SearchItem> = page.into_iter().map(|item| SearchItem { item, score: None }).collect();
        refreshed(store, &page, ttls).await?;
        return Ok(page);
    };
    let scores = if store.has_vectors && !items.is_empty() {
        let keys: Vec<(String, &str)> =
            items.iter().map(|i| (i.namespace.join("."), i.key.as_str())).collect();
        best_scores(store, &keys, &query_vector).await?
    } else {
        HashMap::new()
    };
    // Scored items best first, then unscored ones, each newest first (the order they came in).
    let mut hits: Vec<SearchItem> = items
        .into_iter()
        .map(|item| {
            let score = scores.get(&(item.namespace.join("."), item.key.clone())).copied();
            SearchItem { item, score }
        })
        .collect();
    hits.sort_by(|a, b| match (a.score, b.score) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let page: Vec<SearchItem> = hits.into_iter().skip(query.offset).take(query.limit).collect();
    refreshed(store, &page, ttls).await?;
    Ok(page)
}

/// Refreshes the expiry of the returned items that have a TTL (`ttls`, by prefix and key), as
/// `get` does, unless the store does not refresh on read (LangGraph's `search(...,
/// refresh_ttl=None)` follows `refresh_on_read`).
async fn refreshed(
    store: &SqliteStore,
    page: &[SearchItem],
    mut ttls: HashMap<(String, String), f64>,
) -> Result<()> {
    if !store.ttl.refresh_on_read || ttls.is_empty() {
        return Ok(());
    }
    let keys: Vec<(String, String, f64)> = page
        .iter()
        .filter_map(|hit| {
            let id = (hit.item.namespace.join("."), hit.item.key.clone());
            let minutes = ttls.remove(&id)?;
            Some((id.0, id.1, minutes))
        })
        .collect();
    if keys.is_empty() {
        return Ok(());
    }
    refresh(store, &keys).await
}

/// How many items' vectors one statement reads: two bound values each, well under SQLite's
/// limit on bound values.
const KEYS_PER_READ: usize = 400;

/// The best cosine similarity to `query` among the vectors of each item of `keys` (its prefix
/// and key), by `(prefix, key)`. Only those items' vectors are read, so a filter that keeps few
/// items keeps the read small. A vector of another length (written with another model) scores
/// nothing rather than failing the search.
async fn best_scores(
    store: &SqliteStore,
    keys: &[(String, &str)],
    query: &[f32],
) -> Result<HashMap<(String, String), f64>> {
    let mut best: HashMap<(String, String), f64> = HashMap::new();
    let mut vector = Vec::with_capacity(query.len());
    for chunk in keys.chunks(KEYS_PER_READ) {
        let pairs = vec!["(?, ?)"; chunk.len()].join(", ");
        let sql = format!(
            "SELECT prefix, key, embedding FROM store_vectors WHERE (prefix, key) IN (VALUES {pairs})"
        );
        let mut statement = sqlx::query_as::<_, (String, String, Option<Vec<u8>>)>(&sql);
        for (prefix, key) in chunk {
            statement = statement.bind(prefix.as_str()).bind(*key);
        }
        let rows = statement.fetch_all(&store.pool).await.map_err(|e| Error::driver("store search", e))?;
        for (prefix, key, blob) in rows {
            let Some(blob) = blob.filter(|b| b.len() == query.len() * 4) else { continue };
            vector.clear();
            vector.extend(blob.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            let score = cosine_similarity(query, &vector);
            best.entry((prefix, key)).and_modify(|s| *s = s.max(score)).or_insert(score);
        }
    }
    Ok(best)
}

pub(super) async fn count(store: &SqliteStore, namespace_prefix: &[String]) -> Result<usize> {
    let (condition, args) = under(namespace_prefix);
    let sql = format!("SELECT COUNT(*) FROM store WHERE {condition} AND {LIVE}");
    let mut statement = sqlx::query_scalar::<_, i64>(&sql);
    for arg in &args {
        statement = statement.bind(arg);
    }
    let n = statement
        .bind(now_text())
        .fetch_one(&store.pool)
        .await
        .map_err(|e| Error::driver("store count", e))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

pub(super) async fn list_namespaces(
    store: &SqliteStore,
    options: ListNamespaces,
) -> Result<Vec<Vec<String>>> {
    let prefixes: Vec<String> =
        sqlx::query_scalar(&format!("SELECT DISTINCT prefix FROM store WHERE {LIVE}"))
            .bind(now_text())
            .fetch_all(&store.pool)
            .await
            .map_err(|e| Error::driver("store list_namespaces", e))?;
    let namespaces: Vec<Vec<String>> =
        prefixes.iter().map(|p| p.split('.').map(str::to_owned).collect()).collect();
    Ok(options.apply(namespaces.iter().map(Vec::as_slice)))
}
