//! Reads over many items: `search` (filtered), `count` and `list_namespaces`.

use mnemograph_checkpoint::store::{
    matches_filter, validate_filter, ListNamespaces, SearchItem, SearchQuery, StoreError,
};

use super::items::{decode, ItemRow, ITEM_COLUMNS, LIVE};
use super::{has_nul, under, PostgresStore};
use crate::error::{Error, Result};

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
    let (condition, args) = under(namespace_prefix);
    // Newest write first, as LangGraph orders a search without a query. Without a filter the
    // server pages; a filter is applied here (the semantics of `matches_filter`, which SQL on
    // JSONB does not share for mixed numbers and texts), so every candidate is read.
    let mut sql =
        format!("SELECT {ITEM_COLUMNS} FROM store WHERE {condition} AND {LIVE} ORDER BY updated_at DESC");
    let pages_in_sql = query.filter.is_none();
    if pages_in_sql {
        sql.push_str(&format!(" LIMIT ${} OFFSET ${}", args.len() + 1, args.len() + 2));
    }
    let mut statement = sqlx::query_as::<_, ItemRow>(&sql);
    for arg in &args {
        statement = statement.bind(arg);
    }
    if pages_in_sql {
        statement = statement
            .bind(i64::try_from(query.limit).unwrap_or(i64::MAX))
            .bind(i64::try_from(query.offset).unwrap_or(i64::MAX));
    }
    let rows = statement.fetch_all(&store.pool).await.map_err(Error::from)?;
    let mut items = Vec::with_capacity(rows.len());
    for row in rows {
        let item = decode(row)?;
        if let Some(filter) = &query.filter {
            if !matches_filter(&item.value, filter)? {
                continue;
            }
        }
        items.push(item);
    }
    let page: Vec<_> =
        if pages_in_sql { items } else { items.into_iter().skip(query.offset).take(query.limit).collect() };
    Ok(page.into_iter().map(|item| SearchItem { item, score: None }).collect())
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
