//! [`EmbeddedMemory`]: the [`Memory`] API over a mnemograph-checkpoint [`Store`], with no server.

use std::sync::Arc;

use mnemograph_checkpoint::store::{
    DynEmbeddings, Embeddings, InMemoryStore, IndexConfig, SearchQuery, Store,
};
use serde_json::{json, Map, Value};

use crate::bm25;
use crate::error::Result;
use crate::memory::{finish, scored_ids, Memory};
use crate::newer_first::NewerFirst;
use crate::record::{
    now_secs, validate_id, MemoryHit, MemoryRecord, NewMemory, RetrieveQuery, SearchMode, SessionScope,
};
use crate::rerank::RerankConfig;
use crate::retire::UserLocks;
use crate::spans::{traced_retrieve, traced_save};

/// Top-level item field mirroring the retirement marks in `metadata`, for the store's filter.
pub(crate) const RETIRED: &str = "retired";

/// The embedded default: memories as items of a [`Store`] (an [`InMemoryStore`] unless given
/// another), one namespace per user, with the same retrieval pipeline as mnemograph-memory-milvus's
/// `MilvusMemory` (dense + in-process BM25, RRF, decay, importance).
///
/// Good for examples, tests and single-process apps; it keeps everything in memory and scores
/// keywords by scanning the user's memories, so it is not meant for large histories.
#[derive(Debug, Clone)]
pub struct EmbeddedMemory<S = InMemoryStore> {
    /// Where memories live; it must index the `content` field for dense search.
    store: S,
    /// First namespace label; the second is derived from the user id.
    root: String,
    /// How hits are reranked.
    rerank: RerankConfig,
    /// Serializes retire/restore/delete per user among this value's clones (see [`Retire`]).
    ///
    /// [`Retire`]: crate::Retire
    locks: UserLocks,
    /// Moves newer restatements up; needs the model the store embeds with.
    newer_first: Option<NewerFirst>,
}

impl EmbeddedMemory<InMemoryStore> {
    /// A fresh in-process memory embedding with `embed`.
    pub fn new(embed: impl Embeddings) -> Self {
        Self::from_arc(Arc::new(embed))
    }
    /// A fresh in-process memory embedding with a shared model.
    pub fn from_arc(embed: Arc<dyn DynEmbeddings>) -> Self {
        let store = InMemoryStore::with_index(IndexConfig::from_arc(Arc::clone(&embed)).fields(["content"]));
        Self::with_store(store).embeddings(embed)
    }
}

impl<S: Store> EmbeddedMemory<S> {
    /// Memories in an existing store (e.g. the graph's `Arc<dyn DynStore>`), under the namespace
    /// root `memories`. Configure the store's index with the field `content`.
    pub fn with_store(store: S) -> Self {
        Self {
            store,
            root: "memories".to_owned(),
            rerank: RerankConfig::default(),
            locks: UserLocks::default(),
            newer_first: None,
        }
    }
    /// The model the store embeds `content` with, so that retrieval can rank a newer
    /// restatement above the older memory it restates ([`RerankConfig::newer_first`]). Set by
    /// [`new`](EmbeddedMemory::new) and [`from_arc`](EmbeddedMemory::from_arc); without it,
    /// results keep their score order.
    #[must_use]
    pub fn embeddings(mut self, embed: Arc<dyn DynEmbeddings>) -> Self {
        self.newer_first = Some(NewerFirst::new(embed));
        self
    }
    /// Sets how hits are reranked.
    #[must_use]
    pub fn rerank(mut self, rerank: RerankConfig) -> Self {
        self.rerank = rerank;
        self
    }
    /// The underlying store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The dense hits of `text` among the user's memories passing `filter`, relevance = cosine.
    async fn dense(
        &self,
        ns: &[String],
        text: String,
        filter: &Value,
        limit: usize,
    ) -> Result<Vec<(MemoryRecord, f64)>> {
        let q = SearchQuery::new().query(text).filter(filter.clone()).limit(limit);
        Ok(self
            .store
            .search(ns, q)
            .await?
            .into_iter()
            .filter_map(|h| Some((record(&h.value)?, h.score?.clamp(0.0, 1.0))))
            .collect())
    }

    /// The per-user locks of this value and its clones.
    pub(crate) fn locks(&self) -> &UserLocks {
        &self.locks
    }

    /// The user's namespace. The label is escaped because namespace labels may not contain `.`
    /// (or NUL), which user ids may; the `u:` prefix keeps it non-empty and unambiguous.
    pub(crate) fn namespace(&self, user_id: &str) -> Vec<String> {
        let label = user_id.replace('%', "%25").replace('.', "%2E");
        vec![self.root.clone(), format!("u:{label}")]
    }

    fn filter(query: &RetrieveQuery) -> Value {
        let mut f = Map::new();
        // Redundant with the namespace, on purpose: isolation should not rest on one mechanism.
        f.insert("user_id".into(), query.user_id.clone().into());
        match &query.session {
            SessionScope::All => {}
            SessionScope::Only(s) => {
                f.insert("session_id".into(), s.clone().into());
            }
            SessionScope::Exclude(s) => {
                f.insert("session_id".into(), json!({ "$ne": s }));
            }
        }
        let mut window = Map::new();
        if let Some(since) = query.since {
            window.insert("$gte".into(), since.into());
        }
        if let Some(until) = query.until {
            window.insert("$lte".into(), until.into());
        }
        if !window.is_empty() {
            f.insert("created_at".into(), Value::Object(window));
        }
        if let Some(min) = query.min_importance {
            f.insert("importance".into(), json!({ "$gte": min }));
        }
        if !query.include_retired {
            // `$ne` also matches items without the flag, i.e. every memory never retired.
            f.insert(RETIRED.into(), json!({ "$ne": true }));
        }
        Value::Object(f)
    }
}

pub(crate) fn record(value: &Value) -> Option<MemoryRecord> {
    Some(MemoryRecord {
        id: value.get("id")?.as_i64()?,
        user_id: value.get("user_id")?.as_str()?.to_owned(),
        session_id: value.get("session_id")?.as_str()?.to_owned(),
        role: value.get("turn_role")?.as_str()?.to_owned(),
        content: value.get("content")?.as_str()?.to_owned(),
        created_at: value.get("created_at")?.as_i64()?,
        importance: value.get("importance")?.as_f64()? as f32,
        metadata: value.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default(),
    })
}

/// The API's work; the trait methods below wrap it in spans.
impl<S: Store> EmbeddedMemory<S> {
    async fn insert(&self, memories: Vec<NewMemory>) -> Result<Vec<i64>> {
        let mut ids = Vec::with_capacity(memories.len());
        for m in memories {
            m.validate()?;
            // Random positive 63-bit ids: unique without coordination, like Milvus's auto ids.
            let id = (uuid::Uuid::new_v4().as_u128() >> 65) as i64;
            let value = json!({
                "id": id,
                "user_id": m.user_id,
                "session_id": m.session_id,
                "turn_role": m.role,
                "content": m.content,
                "created_at": m.created_at.unwrap_or_else(now_secs),
                "importance": m.importance,
                "metadata": m.metadata,
            });
            self.store.put(&self.namespace(&m.user_id), &id.to_string(), value, None).await?;
            ids.push(id);
        }
        Ok(ids)
    }

    async fn search(&self, query: RetrieveQuery) -> Result<Vec<MemoryHit>> {
        validate_id("user_id", &query.user_id)?;
        let ns = self.namespace(&query.user_id);
        let filter = Self::filter(&query);
        let cand = query.candidates();
        let dense = self.dense(&ns, query.dense_text(), &filter, cand).await?;
        let context = match query.context_text() {
            Some(text) => Some(self.dense(&ns, text, &filter, cand).await?),
            None => None,
        };
        let candidates = match (query.mode, context) {
            (SearchMode::Dense, None) => dense,
            (SearchMode::Dense, Some(context)) => {
                let lists = [scored_ids(&dense), scored_ids(&context)];
                let fused = self.rerank.fuse_query(&lists[0], Some(&lists[1]), None);
                let records = dense.into_iter().chain(context).map(|(r, _)| r).collect::<Vec<_>>();
                attach(fused, &records, cand)
            }
            (SearchMode::Hybrid, context) => {
                // Keyword search scans all of the user's (filtered) memories: BM25 needs document
                // frequencies over the whole set, not just the dense candidates.
                let all: Vec<MemoryRecord> = self
                    .store
                    .search(&ns, SearchQuery::new().filter(filter).limit(usize::MAX))
                    .await?
                    .iter()
                    .filter_map(|h| record(&h.value))
                    .collect();
                let docs: Vec<&str> = all.iter().map(|r| r.content.as_str()).collect();
                let mut lexical: Vec<(usize, f64)> =
                    bm25::scores(&query.query, &docs).into_iter().enumerate().filter(|s| s.1 > 0.0).collect();
                lexical.sort_by(|a, b| b.1.total_cmp(&a.1));
                lexical.truncate(cand);
                let keyword_list: Vec<(i64, f64)> = lexical.iter().map(|&(i, s)| (all[i].id, s)).collect();
                let context_list = context.as_deref().map(scored_ids);
                let fused =
                    self.rerank.fuse_query(&scored_ids(&dense), context_list.as_deref(), Some(&keyword_list));
                attach(fused, &all, cand)
            }
        };
        match &self.newer_first {
            Some(step) => step.finish(candidates, &query, &self.rerank).await,
            None => Ok(finish(candidates, &query, &self.rerank)),
        }
    }
}

impl<S: Store> Memory for EmbeddedMemory<S> {
    async fn save(&self, memories: Vec<NewMemory>) -> Result<Vec<i64>> {
        traced_save("embedded", memories.len(), self.insert(memories)).await
    }

    async fn retrieve(&self, query: RetrieveQuery) -> Result<Vec<MemoryHit>> {
        traced_retrieve("embedded", query, |q| self.search(q)).await
    }

    async fn session_records(&self, user_id: &str, session_id: &str) -> Result<Vec<MemoryRecord>> {
        validate_id("user_id", user_id)?;
        validate_id("session_id", session_id)?;
        let filter = json!({"user_id": user_id, "session_id": session_id});
        let ns = self.namespace(user_id);
        let hits = self.store.search(&ns, SearchQuery::new().filter(filter).limit(usize::MAX)).await?;
        let mut records: Vec<MemoryRecord> = hits.iter().filter_map(|h| record(&h.value)).collect();
        // The store lists newest writes first; reversed, a stable sort by time keeps write order
        // among memories created in the same second.
        records.reverse();
        records.sort_by_key(|r| r.created_at);
        Ok(records)
    }

    async fn delete(&self, user_id: &str, ids: &[i64]) -> Result<()> {
        validate_id("user_id", user_id)?;
        let ns = self.namespace(user_id);
        // Not between a retirement's read and its write, which would put the deleted item back.
        let _user = self.locks.lock(user_id).await;
        for id in ids {
            self.store.delete(&ns, &id.to_string()).await?;
        }
        if let Some(step) = &self.newer_first {
            step.forget(ids);
        }
        Ok(())
    }
}

/// The first `limit` fused ids with their records (from `records`) and fused relevance.
fn attach(fused: Vec<(i64, f64)>, records: &[MemoryRecord], limit: usize) -> Vec<(MemoryRecord, f64)> {
    fused
        .into_iter()
        .take(limit)
        .filter_map(|(id, relevance)| Some((records.iter().find(|r| r.id == id)?.clone(), relevance)))
        .collect()
}
