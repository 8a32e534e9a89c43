//! The [`Memory`] trait both backends implement, and the reranking step they share.

use std::future::Future;

use crate::error::Result;
use crate::record::{now_secs, MemoryHit, MemoryRecord, NewMemory, RetrieveQuery};
use crate::rerank::RerankConfig;

/// Long-term conversational memory: write, retrieve and compaction operations.
///
/// Implemented by [`EmbeddedMemory`](crate::EmbeddedMemory) and mnemograph-memory-milvus's `MilvusMemory`,
/// so an agent can be written once and run with or without a server.
///
/// Every method is scoped to one user: no call returns or deletes another user's memories.
pub trait Memory: Send + Sync + 'static {
    /// Stores memories, returning their ids in order.
    ///
    /// # Errors
    /// [`Error::InvalidInput`](crate::Error::InvalidInput) for an empty id or one with a control
    /// character; embedding or backend failures.
    fn save(&self, memories: Vec<NewMemory>) -> impl Future<Output = Result<Vec<i64>>> + Send;

    /// Stores one exchange (build it with [`NewMemory::turn`]): the hot-path write, one row per
    /// question and answer.
    ///
    /// # Errors
    /// As [`save`](Self::save).
    fn save_turn(&self, turn: NewMemory) -> impl Future<Output = Result<i64>> + Send {
        async move {
            let ids = self.save(vec![turn]).await?;
            ids.into_iter()
                .next()
                .ok_or_else(|| crate::Error::Response { detail: "insert returned no id".into() })
        }
    }

    /// The user's memories most relevant to the query, best first (see [`RetrieveQuery`]).
    ///
    /// # Errors
    /// An invalid user or session id; embedding or backend failures.
    fn retrieve(&self, query: RetrieveQuery) -> impl Future<Output = Result<Vec<MemoryHit>>> + Send;

    /// Every memory of one session of one user, oldest first.
    ///
    /// # Errors
    /// An invalid id; backend failures.
    fn session_records(
        &self,
        user_id: &str,
        session_id: &str,
    ) -> impl Future<Output = Result<Vec<MemoryRecord>>> + Send;

    /// Deletes memories of `user_id` by id; ids of other users are left alone.
    ///
    /// # Errors
    /// An invalid id; backend failures.
    fn delete(&self, user_id: &str, ids: &[i64]) -> impl Future<Output = Result<()>> + Send;
}

/// `(id, score)` of scored records, in their order: what fusion ranks.
pub fn scored_ids(scored: &[(MemoryRecord, f64)]) -> Vec<(i64, f64)> {
    scored.iter().map(|(r, s)| (r.id, *s)).collect()
}

/// Turns candidates with a relevance into the final, reranked, truncated hits.
///
/// Candidates of another user, and retired ones unless asked for, are dropped here too: the
/// backend filter is the mechanism, this is a second line in case a backend ever ignores it.
/// Newer versions are not moved up here: [`NewerFirst::finish`](crate::NewerFirst::finish) does
/// that, with the candidates' vectors.
pub fn finish(
    candidates: Vec<(MemoryRecord, f64)>,
    query: &RetrieveQuery,
    rerank: &RerankConfig,
) -> Vec<MemoryHit> {
    let mut hits = rank(candidates, query, rerank);
    hits.truncate(query.top_k);
    hits
}

/// [`finish`] without the truncation: every candidate the query may see, best first.
pub(crate) fn rank(
    candidates: Vec<(MemoryRecord, f64)>,
    query: &RetrieveQuery,
    rerank: &RerankConfig,
) -> Vec<MemoryHit> {
    let now = query.now.unwrap_or_else(now_secs);
    let mut hits: Vec<MemoryHit> = candidates
        .into_iter()
        .filter(|(r, _)| {
            r.user_id == query.user_id
                && (query.include_retired || !r.is_retired())
                && query.min_importance.is_none_or(|min| r.importance >= min)
        })
        .map(|(record, relevance)| {
            let score = if query.rerank {
                rerank.score(relevance, now - record.created_at, f64::from(record.importance))
            } else {
                relevance
            };
            MemoryHit { record, relevance, score }
        })
        .collect();
    // Stable: equal scores keep the backend's order.
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits
}
