//! The [`Memory`] API of [`MilvusMemory`]: saving exchanges, hybrid retrieval with decay and
//! importance, session listings and deletion, each scoped to one user.

use std::collections::HashMap;

use futures_util::future::OptionFuture;
use milvus::v2::prelude::*;
use mnemograph_checkpoint::store::DynEmbeddings;
use serde_json::{json, Value};

use mnemograph_memory::backend::{is_retired, scored_ids, traced_retrieve, traced_save, validate_id};
use mnemograph_memory::{
    now_secs, Error as MemoryError, Memory, MemoryHit, MemoryRecord, NewMemory, RetrieveQuery, SearchMode,
};

use super::{to_record, truncate_bytes, user_filter, MilvusMemory, OUTPUT, QUERY_PAGE};
use crate::error::{Error, Result};
use crate::schema::{fields, HybridFusion};

/// What one retrieval searches: the scope, how many candidates each list brings, and the lists
/// (the question's vector always; the enriched query's vector and the keywords when present).
struct Lists {
    filter: String,
    candidates: i64,
    question: Vec<f32>,
    context: Option<Vec<f32>>,
    keywords: Option<String>,
}

/// Whether the server has no such RPC (a Milvus before `HybridSearch`), also when retries wrap
/// the answer.
fn unimplemented(e: &milvus::v2::prelude::Error) -> bool {
    match e {
        milvus::v2::prelude::Error::Grpc(status) => i32::from(status.code()) == UNIMPLEMENTED,
        milvus::v2::prelude::Error::RetryExhausted { source, .. } => unimplemented(source),
        _ => false,
    }
}

/// gRPC's status code `UNIMPLEMENTED`.
const UNIMPLEMENTED: i32 = 12;

/// The API, each call returning the shared error (a Milvus failure as its `Backend`).
impl Memory for MilvusMemory {
    async fn save(&self, memories: Vec<NewMemory>) -> mnemograph_memory::Result<Vec<i64>> {
        Ok(traced_save("milvus", memories.len(), self.insert(memories)).await?)
    }

    async fn retrieve(&self, query: RetrieveQuery) -> mnemograph_memory::Result<Vec<MemoryHit>> {
        Ok(traced_retrieve("milvus", query, |q| self.search(q)).await?)
    }

    async fn session_records(
        &self,
        user_id: &str,
        session_id: &str,
    ) -> mnemograph_memory::Result<Vec<MemoryRecord>> {
        Ok(self.records_of_session(user_id, session_id).await?)
    }

    async fn delete(&self, user_id: &str, ids: &[i64]) -> mnemograph_memory::Result<()> {
        Ok(self.delete_rows(user_id, ids).await?)
    }
}

/// The API's work, in this crate's error.
impl MilvusMemory {
    async fn insert(&self, memories: Vec<NewMemory>) -> Result<Vec<i64>> {
        if memories.is_empty() {
            return Ok(Vec::new());
        }
        let id_max = self.config.id_max_bytes as usize;
        for m in &memories {
            m.validate()?;
            if m.user_id.len() > id_max || m.session_id.len() > id_max {
                return Err(MemoryError::InvalidInput {
                    what: "user_id or session_id",
                    reason: "longer than id_max_bytes",
                }
                .into());
            }
        }
        let texts: Vec<String> = memories.iter().map(|m| m.content.clone()).collect();
        let vectors =
            DynEmbeddings::embed_documents(&*self.embed, &texts).await.map_err(MemoryError::Embedding)?;
        let now = now_secs();
        let mut rows = Vec::with_capacity(memories.len());
        for v in &vectors {
            self.check_dims(v)?;
        }
        // Kept for the newer-first step only when it is on: a copy of every vector otherwise.
        let stored = self.config.rerank.newer_first.is_some().then(|| vectors.clone());
        for (m, v) in memories.into_iter().zip(vectors) {
            let (mut content, mut metadata) = (m.content, m.metadata);
            if truncate_bytes(&mut content, self.config.content_max_bytes as usize) {
                metadata.insert("truncated".into(), true.into());
            }
            // A memory saved with marks (a copy of a retired one) is retired from the start.
            let retired = is_retired(&metadata);
            let mut row = json!({
                fields::EMBEDDING: v,
                fields::USER_ID: m.user_id,
                fields::SESSION_ID: m.session_id,
                fields::TURN_ROLE: m.role,
                fields::CONTENT: content,
                fields::CREATED_AT: m.created_at.unwrap_or(now),
                fields::IMPORTANCE: m.importance,
                fields::METADATA: Value::Object(metadata),
            });
            if self.retired_field {
                row[fields::RETIRED] = retired.into();
            }
            rows.push(row);
        }
        // No flush: it seals segments (slow, and a hot-path write needs none); strong-consistency
        // reads already see unflushed rows.
        let req = InsertRequest::builder().collection_name(&self.config.collection).rows(rows).build()?;
        match self.client.insert(req).await?.ids() {
            Ids::Int64(ids) => {
                if let Some(stored) = &stored {
                    self.newer_first.remember(ids, stored);
                }
                Ok(ids.clone())
            }
            _ => Err(MemoryError::Response { detail: "insert returned non-integer ids".into() }.into()),
        }
    }

    async fn search(&self, query: RetrieveQuery) -> Result<Vec<MemoryHit>> {
        let filter = self.scope_filter(&query)?.to_expr();
        let context_text = query.context_text();
        let mut texts = vec![query.dense_text()];
        texts.extend(context_text.iter().cloned());
        let mut vectors =
            DynEmbeddings::embed_documents(&*self.embed, &texts).await.map_err(MemoryError::Embedding)?;
        if vectors.len() != texts.len() {
            return Err(MemoryError::Response {
                detail: format!("{} vectors for {} texts", vectors.len(), texts.len()),
            }
            .into());
        }
        for v in &vectors {
            self.check_dims(v)?;
        }
        let context_vector = context_text.is_some().then(|| vectors.pop()).flatten();
        let question_vector = vectors.pop().unwrap_or_default();
        let hybrid = query.mode == SearchMode::Hybrid && self.config.bm25 && !query.query.trim().is_empty();
        let lists = Lists {
            filter,
            candidates: query.candidates() as i64,
            question: question_vector,
            context: context_vector,
            keywords: hybrid.then(|| query.query.clone()),
        };
        if lists.context.is_none() && lists.keywords.is_none() {
            let response =
                self.client.search(self.dense_search(&lists, lists.question.clone()).build()?).await?;
            let candidates = self.scored_rows(&response, false)?;
            return Ok(self.newer_first.finish(candidates, &query, &self.config.rerank).await?);
        }
        if self.fusion().on_server() {
            match self.server_fused(&lists).await {
                Ok(candidates) => {
                    return Ok(self.newer_first.finish(candidates, &query, &self.config.rerank).await?)
                }
                Err(Error::Milvus(e)) if unimplemented(&e) => self.refuse_hybrid(),
                Err(e) => return Err(e),
            }
        }
        let candidates = self.client_fused(lists).await?;
        Ok(self.newer_first.finish(candidates, &query, &self.config.rerank).await?)
    }

    /// A dense search of `vector` within the query's scope.
    fn dense_search(&self, lists: &Lists, vector: Vec<f32>) -> SearchRequestBuilder {
        SearchRequest::builder()
            .collection_name(&self.config.collection)
            .vector_field(fields::EMBEDDING)
            .vectors(SearchVectors::Float(vec![vector]))
            .filter(lists.filter.clone())
            .extra_params(self.ef(lists))
            .limit(lists.candidates)
            .output_fields(OUTPUT)
            .consistency_level(self.config.consistency.to_milvus())
    }

    /// HNSW's `ef`: at least the number of candidates, which it bounds.
    fn ef(&self, lists: &Lists) -> HashMap<String, String> {
        let ef = self.config.ef_search.max(lists.candidates as u32);
        HashMap::from([("ef".to_owned(), ef.to_string())])
    }

    /// The lists fused by the server in one `HybridSearch`, with their relevance in `[0, 1]`:
    /// the fused score over the score of a memory first (or scoring 1) in every list.
    async fn server_fused(&self, lists: &Lists) -> Result<Vec<(MemoryRecord, f64)>> {
        let rerank = &self.config.rerank;
        let dense = |vector: &[f32]| {
            SubSearchRequest::builder()
                .vector_field(fields::EMBEDDING)
                .vectors(SearchVectors::Float(vec![vector.to_vec()]))
                .filter(lists.filter.clone())
                .extra_params(self.ef(lists))
                .limit(lists.candidates)
                .build()
                .map_err(Error::from)
        };
        // A list of weight 0 cannot change the order, and RRF would count it in full.
        let mut subs = vec![(dense(&lists.question)?, 1.0)];
        if let Some(v) = lists.context.as_deref().filter(|_| rerank.context_weight > 0.0) {
            subs.push((dense(v)?, rerank.context_weight));
        }
        if let Some(text) = lists.keywords.as_ref().filter(|_| rerank.keyword_weight > 0.0) {
            let keywords = SubSearchRequest::builder()
                .vector_field(fields::SPARSE)
                .vectors(SearchVectors::EmbeddedText(vec![text.clone()]))
                .filter(lists.filter.clone())
                .limit(lists.candidates)
                .build()?;
            subs.push((keywords, rerank.keyword_weight));
        }
        let weights: Vec<f32> = subs.iter().map(|s| s.1 as f32).collect();
        let (ranker, best): (Function, f64) = match self.fusion() {
            HybridFusion::ServerRrf => {
                let k = rerank.rrf_k;
                (RRFRerank::new().k(i64::from(k)).into(), subs.len() as f64 / (f64::from(k) + 1.0))
            }
            // `norm_score` maps every list's scores into [0, 1] (cosine as (1 + s) / 2, BM25 by
            // arctan) before weighing them; without it BM25's unbounded scores would swamp the
            // dense ones.
            _ => {
                let params = json!({"weights": weights, "norm_score": true}).to_string();
                let ranker =
                    Function::from(WeightedRerank::new().weights(weights.clone())).param("params", params);
                (ranker, weights.iter().map(|w| f64::from(*w)).sum())
            }
        };
        let req = HybridSearchRequest::builder()
            .collection_name(&self.config.collection)
            .sub_requests(subs.into_iter().map(|s| s.0).collect())
            .rerank(ranker)
            .limit(lists.candidates)
            .output_fields(OUTPUT)
            .consistency_level(self.config.consistency.to_milvus())
            .build()?;
        let response = self.client.hybrid_search(req).await?;
        let fused = self.scored_rows(&response, true)?;
        Ok(fused
            .into_iter()
            .map(|(record, s)| (record, if best > 0.0 { (s / best).clamp(0.0, 1.0) } else { 0.0 }))
            .collect())
    }

    /// The lists searched concurrently, one request each, and fused here with
    /// [`RerankConfig::fuse_query`](mnemograph_memory::RerankConfig::fuse_query), so that each
    /// list has its own weight in RRF and both memories fuse with the same formula.
    async fn client_fused(&self, lists: Lists) -> Result<Vec<(MemoryRecord, f64)>> {
        let keywords = match &lists.keywords {
            Some(text) => Some(
                SearchRequest::builder()
                    .collection_name(&self.config.collection)
                    .vector_field(fields::SPARSE)
                    .vectors(SearchVectors::EmbeddedText(vec![text.clone()]))
                    .filter(lists.filter.clone())
                    .limit(lists.candidates)
                    .output_fields(OUTPUT)
                    .consistency_level(self.config.consistency.to_milvus())
                    .build()?,
            ),
            None => None,
        };
        // Boxed: a search future is large, and three of them side by side overflow a test
        // thread's stack.
        let question =
            Box::pin(self.client.search(self.dense_search(&lists, lists.question.clone()).build()?));
        let context = match &lists.context {
            Some(v) => Some(Box::pin(self.client.search(self.dense_search(&lists, v.clone()).build()?))),
            None => None,
        };
        let keywords = keywords.map(|k| Box::pin(self.client.search(k)));
        let (question, context, keywords) =
            futures_util::future::join3(question, OptionFuture::from(context), OptionFuture::from(keywords))
                .await;
        let (question, context, keywords) = (question?, context.transpose()?, keywords.transpose()?);
        let question = self.scored_rows(&question, false)?;
        let context = context.map(|r| self.scored_rows(&r, false)).transpose()?;
        let keywords = keywords.map(|r| self.scored_rows(&r, true)).transpose()?;
        let (context_list, keyword_list) =
            (context.as_deref().map(scored_ids), keywords.as_deref().map(scored_ids));
        let fused = self.config.rerank.fuse_query(
            &scored_ids(&question),
            context_list.as_deref(),
            keyword_list.as_deref(),
        );
        let mut records: HashMap<i64, MemoryRecord> = HashMap::new();
        for (record, _) in
            question.into_iter().chain(context.into_iter().flatten()).chain(keywords.into_iter().flatten())
        {
            records.entry(record.id).or_insert(record);
        }
        Ok(fused
            .into_iter()
            .take(lists.candidates as usize)
            .filter_map(|(id, relevance)| Some((records.remove(&id)?, relevance)))
            .collect())
    }

    async fn records_of_session(&self, user_id: &str, session_id: &str) -> Result<Vec<MemoryRecord>> {
        validate_id("session_id", session_id)?;
        let mut out = Vec::new();
        loop {
            let filter = user_filter(user_id)?.eq_str(fields::SESSION_ID, session_id)?;
            let output =
                [fields::ID, OUTPUT[0], OUTPUT[1], OUTPUT[2], OUTPUT[3], OUTPUT[4], OUTPUT[5], OUTPUT[6]];
            let res = self.query(filter, output, Some((out.len(), QUERY_PAGE))).await?;
            let before = out.len();
            for row in res.results().rows()? {
                out.push(to_record(&row)?);
            }
            if out.len() - before < QUERY_PAGE {
                break;
            }
        }
        // Auto ids grow with insertion, so they order same-second memories by write.
        out.sort_by_key(|r| (r.created_at, r.id));
        Ok(out)
    }

    async fn delete_rows(&self, user_id: &str, ids: &[i64]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        // `id in [...]` rather than delete-by-ids, which Milvus Lite rejects; scoped to the user
        // so a caller cannot delete another user's rows by guessing ids.
        let filter = user_filter(user_id)?.in_i64(fields::ID, ids);
        // Not between a retirement's read and its upsert: the upsert of a row deleted meanwhile
        // would fail (or, with another schema, bring the row back).
        let _user = self.locks.lock(user_id).await;
        let req = DeleteRequest::builder()
            .collection_name(&self.config.collection)
            .filter(filter.to_expr())
            .build()?;
        self.client.delete(req).await?;
        self.newer_first.forget(ids);
        Ok(())
    }
}
