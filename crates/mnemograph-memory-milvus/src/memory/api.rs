//! The [`Memory`] API of [`MilvusMemory`]: saving exchanges, hybrid retrieval with decay and
//! importance, session listings and deletion, each scoped to one user.

use std::collections::HashMap;

use futures_util::future::OptionFuture;
use milvus::v2::prelude::*;
use mnemograph_core::store::DynEmbeddings;
use serde_json::{json, Value};

use mnemograph_memory::backend::{finish, scored_ids, traced_retrieve, traced_save, validate_id};
use mnemograph_memory::{
    now_secs, Error as MemoryError, Memory, MemoryHit, MemoryRecord, NewMemory, RetrieveQuery, SearchMode,
};

use super::{to_record, truncate_bytes, user_filter, MilvusMemory, OUTPUT, QUERY_PAGE};
use crate::error::Result;
use crate::schema::fields;

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
        for (m, v) in memories.into_iter().zip(vectors) {
            self.check_dims(&v)?;
            let (mut content, mut metadata) = (m.content, m.metadata);
            if truncate_bytes(&mut content, self.config.content_max_bytes as usize) {
                metadata.insert("truncated".into(), true.into());
            }
            rows.push(json!({
                fields::EMBEDDING: v,
                fields::USER_ID: m.user_id,
                fields::SESSION_ID: m.session_id,
                fields::TURN_ROLE: m.role,
                fields::CONTENT: content,
                fields::CREATED_AT: m.created_at.unwrap_or(now),
                fields::IMPORTANCE: m.importance,
                fields::METADATA: Value::Object(metadata),
            }));
        }
        // No flush: it seals segments (slow, and a hot-path write needs none); strong-consistency
        // reads already see unflushed rows.
        let req = InsertRequest::builder().collection_name(&self.config.collection).rows(rows).build()?;
        match self.client.insert(req).await?.ids() {
            Ids::Int64(ids) => Ok(ids.clone()),
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
        let cand = query.candidates() as i64;
        let ef = HashMap::from([("ef".to_owned(), self.config.ef_search.max(cand as u32).to_string())]);
        let hybrid = query.mode == SearchMode::Hybrid && self.config.bm25 && !query.query.trim().is_empty();
        let consistency = self.config.consistency.to_milvus();
        let collection = &self.config.collection;
        let dense = |vector: Vec<f32>| {
            SearchRequest::builder()
                .collection_name(collection)
                .vector_field(fields::EMBEDDING)
                .vectors(SearchVectors::Float(vec![vector]))
                .filter(filter.clone())
                .extra_params(ef.clone())
                .limit(cand)
                .output_fields(OUTPUT)
                .consistency_level(consistency)
        };
        if !hybrid && context_vector.is_none() {
            let response = self.client.search(dense(question_vector).build()?).await?;
            let candidates = self.scored_rows(&response, false)?;
            return Ok(finish(candidates, &query, &self.config.rerank));
        }
        // The searches run concurrently and are fused here rather than by the server's
        // `RRFRanker`, so that each list has its own weight (`RerankConfig::keyword_weight`,
        // `context_weight`) and both memories fuse with the same formula.
        let keywords = SearchRequest::builder()
            .collection_name(collection)
            .vector_field(fields::SPARSE)
            .vectors(SearchVectors::EmbeddedText(vec![query.query.clone()]))
            .filter(filter.clone())
            .limit(cand)
            .output_fields(OUTPUT)
            .consistency_level(consistency)
            .build()?;
        // Boxed: a search future is large, and three of them side by side overflow a test
        // thread's stack.
        let question = Box::pin(self.client.search(dense(question_vector).build()?));
        let context = match context_vector {
            Some(v) => Some(Box::pin(self.client.search(dense(v).build()?))),
            None => None,
        };
        let keywords = hybrid.then(|| Box::pin(self.client.search(keywords)));
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
        let candidates = fused
            .into_iter()
            .take(query.candidates())
            .filter_map(|(id, relevance)| Some((records.remove(&id)?, relevance)))
            .collect();
        Ok(finish(candidates, &query, &self.config.rerank))
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
        Ok(())
    }
}
