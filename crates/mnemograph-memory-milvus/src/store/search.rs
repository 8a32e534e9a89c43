//! `search` and `list_namespaces` of [`MilvusStore`].

use std::collections::{HashMap, HashSet};
use std::time::SystemTime;

use milvus::v2::prelude::*;
use mnemograph_checkpoint::store::{
    matches_filter, validate_filter, DynEmbeddings, ListNamespaces, NamespaceMatch, SearchItem, SearchQuery,
    StoreError,
};
use serde_json::{Map, Value};

use super::codec::{self, decode_namespace, encode_namespace, fields, item_of, to_item, ITEM_FIELDS};
use super::expr::{namespace_prefix, pushdown, Expr};
use super::{backend, MilvusStore};
use crate::error::Result;

/// Milvus's cap on a search's top-k (`offset + limit`).
const TOPK_MAX: usize = 16_384;

/// Scan results: `(updated_at, id)` of every matching item.
type Stamps = Vec<(i64, String)>;

impl MilvusStore {
    pub(super) async fn search_items(
        &self,
        prefix: &[String],
        query: SearchQuery,
    ) -> Result<Vec<SearchItem>, StoreError> {
        if let Some(filter) = &query.filter {
            validate_filter(filter)?;
        }
        let want = query.offset.saturating_add(query.limit);
        if query.limit == 0 {
            return Ok(Vec::new());
        }
        let mut base = Expr::live(codec::millis(SystemTime::now()));
        if let Some(clause) = namespace_prefix(&encode_namespace(prefix)) {
            base = base.and(clause);
        }
        if let Some(clause) = query.filter.as_ref().and_then(pushdown) {
            base = base.and(clause);
        }
        let filter = query.filter.unwrap_or_default();
        let mut hits = Vec::new();
        let mut unscored = base.clone().and(format!("{} == 0", fields::PART));
        if let (Some(index), Some(text)) = (&self.index, &query.query) {
            let vector =
                DynEmbeddings::embed_query(&*index.embed, text).await.map_err(StoreError::Embedding)?;
            let parts = index.fields.len().max(1);
            let vectored = base.and(format!("{} == true", fields::HAS_VECTOR));
            hits = self.vector_search(vector, vectored.render(), &filter, want, parts).await?;
            unscored = unscored.and(format!("{} == false", fields::HAS_VECTOR));
        }
        if hits.len() < want {
            // No query, no index, or too few scored hits: newest update first, as InMemoryStore.
            let more = self.newest(unscored.render(), &filter, want - hits.len()).await?;
            hits.extend(more.into_iter().map(|item| SearchItem { item, score: None }));
        }
        Ok(hits.into_iter().skip(query.offset).collect())
    }

    /// The `want` best items by similarity among rows matching `expr` and `filter`.
    ///
    /// An item has up to `parts` rows, so `want * parts` rows hold `want` distinct items; the
    /// search widens when the client-side filter drops rows, until Milvus runs out of rows.
    async fn vector_search(
        &self,
        vector: Vec<f32>,
        expr: String,
        filter: &Map<String, Value>,
        want: usize,
        parts: usize,
    ) -> Result<Vec<SearchItem>, StoreError> {
        let mut k = want.saturating_mul(parts).clamp(1, TOPK_MAX);
        loop {
            let ef = HashMap::from([("ef".to_owned(), k.max(64).to_string())]);
            let req = SearchRequest::builder()
                .collection_name(&self.config.collection)
                .vector_field(fields::EMBEDDING)
                .vectors(SearchVectors::Float(vec![vector.clone()]))
                .filter(expr.clone())
                .extra_params(ef)
                .limit(k as i64)
                // The primary key comes back with every hit; asking for it again is refused by some servers.
                .output_fields(ITEM_FIELDS[1..].iter().copied())
                .consistency_level(self.consistency());
            let res = self.client.search(req.build().map_err(backend)?).await.map_err(backend)?;
            let (mut hits, mut seen, mut rows) = (Vec::new(), HashSet::new(), 0);
            for result in res.results() {
                let scores = result.get_scores();
                for (i, row) in result.rows().map_err(backend)?.enumerate() {
                    rows += 1;
                    let id = row.get_str(fields::ID).map_err(backend)?;
                    // Rows come best first, so an item's first row carries its best score.
                    if !seen.insert(item_of(id).to_owned()) {
                        continue;
                    }
                    let item = to_item(&row).map_err(backend)?;
                    if matches_filter(&item.value, filter)? {
                        let score = scores.get(i).map(|s| f64::from(*s));
                        hits.push(SearchItem { item, score });
                    }
                }
            }
            if hits.len() >= want || rows < k || k == TOPK_MAX {
                hits.truncate(want);
                return Ok(hits);
            }
            k = k.saturating_mul(4).min(TOPK_MAX);
        }
    }

    /// The `want` most recently updated items among rows matching `expr` and `filter`.
    async fn newest(
        &self,
        expr: String,
        filter: &Map<String, Value>,
        want: usize,
    ) -> Result<Vec<mnemograph_checkpoint::store::Item>, StoreError> {
        if !filter.is_empty() {
            // The documents are needed to re-check the filter anyway: one pass reads them all.
            let res = self.query(expr, &ITEM_FIELDS).await.map_err(backend)?;
            let mut items = Vec::new();
            for row in res.results().rows().map_err(backend)? {
                let item = to_item(&row).map_err(backend)?;
                if matches_filter(&item.value, filter)? {
                    items.push((row.get_i64(fields::UPDATED_AT).map_err(backend)?, item));
                }
            }
            items.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.key.cmp(&b.1.key)));
            return Ok(items.into_iter().take(want).map(|(_, item)| item).collect());
        }
        // Without a filter, read ids and times first and only the page's documents after.
        let res = self.query(expr, &[fields::ID, fields::UPDATED_AT]).await.map_err(backend)?;
        let mut stamps: Stamps = Vec::new();
        for row in res.results().rows().map_err(backend)? {
            let id = row.get_str(fields::ID).map_err(backend)?.to_owned();
            stamps.push((row.get_i64(fields::UPDATED_AT).map_err(backend)?, id));
        }
        stamps.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        stamps.truncate(want);
        self.fetch(stamps).await
    }

    /// The items of `stamps`' row ids, in that order (rows deleted meanwhile are skipped).
    async fn fetch(&self, stamps: Stamps) -> Result<Vec<mnemograph_checkpoint::store::Item>, StoreError> {
        if stamps.is_empty() {
            return Ok(Vec::new());
        }
        // Row ids hold only `[A-Za-z0-9-~./#]`: they are quoted without escaping.
        let list = stamps.iter().map(|(_, id)| format!("\"{id}\"")).collect::<Vec<_>>().join(", ");
        let res = self.query(format!("{} in [{list}]", fields::ID), &ITEM_FIELDS).await.map_err(backend)?;
        let mut by_id = HashMap::new();
        for row in res.results().rows().map_err(backend)? {
            let id = row.get_str(fields::ID).map_err(backend)?.to_owned();
            by_id.insert(id, to_item(&row).map_err(backend)?);
        }
        Ok(stamps.iter().filter_map(|(_, id)| by_id.remove(id)).collect())
    }

    pub(super) async fn namespaces(&self, options: ListNamespaces) -> Result<Vec<Vec<String>>, StoreError> {
        let mut expr = Expr::live(codec::millis(SystemTime::now())).and(format!("{} == 0", fields::PART));
        // Push the literal head of a prefix condition down; `*` and suffixes are matched here.
        let head = options.conditions.iter().find_map(|c| match c {
            NamespaceMatch::Prefix(p) => {
                Some(p.iter().take_while(|l| *l != "*").cloned().collect::<Vec<_>>())
            }
            NamespaceMatch::Suffix(_) => None,
        });
        if let Some(clause) = head.and_then(|h| namespace_prefix(&encode_namespace(&h))) {
            expr = expr.and(clause);
        }
        let res = self.query(expr.render(), &[fields::NAMESPACE]).await.map_err(backend)?;
        let mut encoded = HashSet::new();
        for row in res.results().rows().map_err(backend)? {
            encoded.insert(row.get_str(fields::NAMESPACE).map_err(backend)?.to_owned());
        }
        let decoded =
            encoded.iter().map(|e| decode_namespace(e)).collect::<Result<Vec<_>>>().map_err(backend)?;
        Ok(options.apply(decoded.iter().map(Vec::as_slice)))
    }
}
