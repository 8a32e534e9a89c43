//! Reads over many items: `search` (filtered, optionally ranked by similarity), `count` and
//! `list_namespaces`.

use std::cmp::Ordering;

use mnemograph_checkpoint::store::{
    matches_filter, validate_filter, DynEmbeddings, ListNamespaces, SearchItem, SearchQuery, StoreError,
};

use super::items::{decode, refresh, ITEM_COLUMNS, LIVE};
use super::{has_nul, prefix_text, under, vectors, PostgresStore};
use crate::error::{Error, Result};

/// A row of [`ITEM_COLUMNS`] and whether the item has a TTL (which a search refreshes).
type SearchRow = (String, String, String, Option<i64>, Option<i64>, bool);

pub(super) async fn search(
    store: &PostgresStore,
    namespace_prefix: &[String],
    query: SearchQuery,
) -> Result<Vec<SearchItem>, StoreError> {
    if let Some(filter) = &query.filter {
        validate_filter(filter)?;
    }
    if namespace_prefix.iter().any(|label| has_nul(label)) {
        return Ok(Vec::new());
    }
    let query_vector = match (&store.index, &query.query) {
        (Some(index), Some(q)) => {
            Some(DynEmbeddings::embed_query(&*index.embed, q).await.map_err(StoreError::Embedding)?)
        }
        _ => None,
    };
    let (condition, args) = under(namespace_prefix);
    // Newest write first, as LangGraph orders a search without a query. Without a filter or a
    // ranking the server pages; a filter is applied here (the semantics of `matches_filter`,
    // which SQL on JSONB does not share for mixed numbers and texts), and a ranking needs every
    // item the filter keeps, so then every candidate is read.
    let mut sql = format!(
        "SELECT {ITEM_COLUMNS}, ttl_minutes IS NOT NULL FROM store WHERE {condition} AND {LIVE} \
         ORDER BY updated_at DESC"
    );
    let pages_in_sql = query.filter.is_none() && query_vector.is_none();
    if pages_in_sql {
        sql.push_str(&format!(" LIMIT ${} OFFSET ${}", args.len() + 1, args.len() + 2));
    }
    let mut statement = sqlx::query_as::<_, SearchRow>(&sql);
    for arg in &args {
        statement = statement.bind(arg);
    }
    if pages_in_sql {
        statement = statement
            .bind(i64::try_from(query.limit).unwrap_or(i64::MAX))
            .bind(i64::try_from(query.offset).unwrap_or(i64::MAX));
    }
    let rows = statement.fetch_all(&store.pool).await.map_err(Error::from)?;
    // Each kept item with whether it has a TTL.
    let mut items = Vec::with_capacity(rows.len());
    for (prefix, key, value, created_at, updated_at, has_ttl) in rows {
        let item = decode((prefix, key, value, created_at, updated_at))?;
        if let Some(filter) = &query.filter {
            if !matches_filter(&item.value, filter)? {
                continue;
            }
        }
        items.push((SearchItem { item, score: None }, has_ttl));
    }
    if let Some(query_vector) = query_vector {
        rank(store, &mut items, &query_vector).await?;
    }
    let page: Vec<_> =
        if pages_in_sql { items } else { items.into_iter().skip(query.offset).take(query.limit).collect() };
    let expiring: Vec<(String, String)> = page
        .iter()
        .filter(|(_, has_ttl)| *has_ttl)
        .map(|(hit, _)| (prefix_text(&hit.item.namespace), hit.item.key.clone()))
        .collect();
    if store.ttl.refresh_on_read && !expiring.is_empty() {
        refresh(store, &expiring).await?;
    }
    Ok(page.into_iter().map(|(hit, _)| hit).collect())
}

/// Scores `items` (newest first) against `query` and sorts them: scored items best first, then
/// unscored ones (no vector of the query's length), each newest first as they came.
async fn rank(store: &PostgresStore, items: &mut [(SearchItem, bool)], query: &[f32]) -> Result<()> {
    if store.vectors.is_none() || items.is_empty() {
        return Ok(());
    }
    let keys: Vec<(String, String)> =
        items.iter().map(|(hit, _)| (prefix_text(&hit.item.namespace), hit.item.key.clone())).collect();
    let mut scores = vectors::best_scores(&store.pool, &keys, query).await?;
    for ((hit, _), key) in items.iter_mut().zip(keys) {
        hit.score = scores.remove(&key);
    }
    items.sort_by(|(a, _), (b, _)| match (a.score, b.score) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    });
    Ok(())
}

pub(super) async fn count(store: &PostgresStore, namespace_prefix: &[String]) -> Result<usize> {
    if namespace_prefix.iter().any(|label| has_nul(label)) {
        return Ok(0);
    }
    let (condition, args) = under(namespace_prefix);
    let sql = format!("SELECT COUNT(*) FROM store WHERE {condition} AND {LIVE}");
    let mut statement = sqlx::query_scalar::<_, i64>(&sql);
    for arg in &args {
        statement = statement.bind(arg);
    }
    let n = statement.fetch_one(&store.pool).await?;
    Ok(usize::try_from(n).unwrap_or(0))
}

pub(super) async fn list_namespaces(
    store: &PostgresStore,
    options: ListNamespaces,
) -> Result<Vec<Vec<String>>> {
    let prefixes: Vec<String> =
        sqlx::query_scalar(&format!("SELECT DISTINCT prefix FROM store WHERE {LIVE}"))
            .fetch_all(&store.pool)
            .await?;
    let namespaces: Vec<Vec<String>> =
        prefixes.iter().map(|p| p.split('.').map(str::to_owned).collect()).collect();
    Ok(options.apply(namespaces.iter().map(Vec::as_slice)))
}
