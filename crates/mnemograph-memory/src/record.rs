//! What a memory stores and how it is asked for: turns, records, hits and retrieval queries.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::retire::marks::{is_retired, SUPERSEDED_BY};

/// `turn_role` of a saved question-and-answer exchange.
pub const ROLE_EXCHANGE: &str = "exchange";
/// `turn_role` of a summary written by [`compact_session`](crate::compact_session).
pub const ROLE_SUMMARY: &str = "summary";

/// Seconds since the Unix epoch, the unit of `created_at`.
pub fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// A memory to store: one row of the memory collection without its id.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NewMemory {
    /// Owner; every read is scoped to it.
    pub user_id: String,
    /// Conversation it came from.
    pub session_id: String,
    /// `exchange`, `summary`, or an application's own role (`user`, `tool`, ...).
    pub role: String,
    /// The text that is embedded and keyword-indexed.
    pub content: String,
    /// Seconds since the epoch; `None` means now.
    pub created_at: Option<i64>,
    /// In `[0, 1]`; weighs reranking (an LLM's score, say; 0.5 when unknown).
    pub importance: f32,
    /// Free-form JSON object.
    pub metadata: Map<String, Value>,
}

impl NewMemory {
    /// A memory with importance 0.5, created now, with empty metadata.
    pub fn new(
        user_id: impl Into<String>,
        session_id: impl Into<String>,
        role: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self {
            user_id: user_id.into(),
            session_id: session_id.into(),
            role: role.into(),
            content: content.into(),
            created_at: None,
            importance: 0.5,
            metadata: Map::new(),
        }
    }

    /// One question-and-answer exchange, as [`Memory::save_turn`](crate::Memory::save_turn) stores
    /// it: the content is `"User: {question}\nAssistant: {answer}"`, role `exchange`, metadata
    /// `{"type": "dialogue_turn"}`.
    pub fn turn(
        user_id: impl Into<String>,
        session_id: impl Into<String>,
        question: &str,
        answer: &str,
    ) -> Self {
        let mut m =
            Self::new(user_id, session_id, ROLE_EXCHANGE, format!("User: {question}\nAssistant: {answer}"));
        m.metadata.insert("type".into(), "dialogue_turn".into());
        m
    }

    /// Sets the importance (clamped to `[0, 1]`).
    #[must_use]
    pub fn importance(mut self, importance: f32) -> Self {
        self.importance = importance.clamp(0.0, 1.0);
        self
    }
    /// Sets the creation time (seconds since the epoch), e.g. when importing history.
    #[must_use]
    pub fn created_at(mut self, secs: i64) -> Self {
        self.created_at = Some(secs);
        self
    }
    /// Adds a metadata entry.
    #[must_use]
    pub fn meta(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Checks the ids: non-empty and free of control characters, so that they can always be put in
    /// a backend's query (Milvus's string literals, say).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the id that breaks a rule.
    pub fn validate(&self) -> Result<()> {
        validate_id("user_id", &self.user_id)?;
        validate_id("session_id", &self.session_id)
    }
}

/// Checks a user or session id: non-empty, with no ASCII control character.
///
/// # Errors
/// [`Error::InvalidInput`] naming `what` and the rule it breaks.
pub fn validate_id(what: &'static str, id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::InvalidInput { what, reason: "must not be empty" });
    }
    if id.chars().any(|c| c.is_ascii_control()) {
        return Err(Error::InvalidInput { what, reason: "contains a control character" });
    }
    Ok(())
}

/// A stored memory.
///
/// Serde types, so a graph state can carry them. `role` and `metadata` may be absent when reading
/// (they read as empty), so a state written with only the other fields still loads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// Its id (Milvus's auto id, or a random positive id in the embedded memory).
    pub id: i64,
    /// Owner.
    pub user_id: String,
    /// Conversation.
    pub session_id: String,
    /// `turn_role`.
    #[serde(default)]
    pub role: String,
    /// Text.
    pub content: String,
    /// Seconds since the epoch.
    pub created_at: i64,
    /// In `[0, 1]`.
    pub importance: f32,
    /// Free-form JSON object.
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

impl MemoryRecord {
    /// The id of the memory that superseded this one, when it was retired (see
    /// [`Retire`](crate::Retire)).
    pub fn superseded_by(&self) -> Option<i64> {
        self.metadata.get(SUPERSEDED_BY).and_then(Value::as_i64)
    }
    /// Whether it was retired as superseded.
    pub fn is_retired(&self) -> bool {
        is_retired(&self.metadata)
    }
    /// The record `m` became when saved with `id` at `created_at`.
    pub(crate) fn saved(id: i64, m: NewMemory, created_at: i64) -> Self {
        Self {
            id,
            user_id: m.user_id,
            session_id: m.session_id,
            role: m.role,
            content: m.content,
            created_at,
            importance: m.importance,
            metadata: m.metadata,
        }
    }
}

/// A retrieved memory with its scores.
///
/// Serialized flat: the record's fields, then `relevance` and `score`, one object, as a graph
/// state that keeps the hits of the latest retrieval stores them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryHit {
    /// The memory.
    #[serde(flatten)]
    pub record: MemoryRecord,
    /// Relevance to the query in `[0, 1]`: cosine similarity (dense) or normalised RRF (hybrid).
    pub relevance: f64,
    /// The score results are ordered by: relevance after time decay and importance.
    pub score: f64,
}

/// Which conversations a retrieval may return memories from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SessionScope {
    /// Every session of the user (cross-session memory).
    #[default]
    All,
    /// Only this session.
    Only(String),
    /// Every session but this one: the current conversation is already in the checkpointed
    /// messages, so recalling it again wastes tokens.
    Exclude(String),
}

/// How candidates are found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SearchMode {
    /// Vector similarity only.
    Dense,
    /// Vector similarity and BM25 keyword search, fused with RRF.
    #[default]
    Hybrid,
}

/// A retrieval: a user, a query and how many memories (`top_k`), plus time window and session
/// scope.
///
/// ```
/// use mnemograph_memory::{RetrieveQuery, SessionScope};
///
/// let q = RetrieveQuery::new("user-1", "which RAG parameters did we change?")
///     .recent(["we talked about chunk sizes", "and rerankers"])
///     .top_k(5)
///     .since(1_700_000_000)
///     .session(SessionScope::Exclude("s-today".into()));
/// assert_eq!(q.dense_text(), "which RAG parameters did we change?");
/// assert!(q.context_text().unwrap().starts_with("we talked about chunk sizes\n"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RetrieveQuery {
    /// Whose memories; nothing of any other user is ever returned.
    pub user_id: String,
    /// The current question.
    pub query: String,
    /// Recent messages of the conversation, oldest first, used to enrich the query.
    pub recent_context: Vec<String>,
    /// How many memories to return (default 3).
    pub top_k: usize,
    /// Only memories created at or after this time (seconds).
    pub since: Option<i64>,
    /// Only memories created at or before this time (seconds).
    pub until: Option<i64>,
    /// Which sessions.
    pub session: SessionScope,
    /// Dense or hybrid.
    pub mode: SearchMode,
    /// Whether to apply time decay and importance (default true).
    pub rerank: bool,
    /// The time ages are measured from (default: now); fixed in tests and benchmarks.
    pub now: Option<i64>,
    /// Whether memories retired as superseded (see [`Retire`](crate::Retire)) may be returned
    /// (default false: a stale fact is never recalled).
    pub include_retired: bool,
    /// Only memories at least this important (importance as a filter: small talk scored low
    /// never takes a place in the top k). `None` (the default) filters nothing.
    pub min_importance: Option<f32>,
}

/// How many recent messages the enriched query keeps: the last two exchanges, enough to resolve a
/// follow-up ("and her birthday?") without letting an older topic steer the search.
pub const ENRICH_RECENT: usize = 4;

impl RetrieveQuery {
    /// A hybrid, reranked, all-sessions query for the top 3.
    pub fn new(user_id: impl Into<String>, query: impl Into<String>) -> Self {
        Self {
            user_id: user_id.into(),
            query: query.into(),
            recent_context: Vec::new(),
            top_k: 3,
            since: None,
            until: None,
            session: SessionScope::All,
            mode: SearchMode::Hybrid,
            rerank: true,
            now: None,
            include_retired: false,
            min_importance: None,
        }
    }
    /// Recent messages, oldest first; the last [`ENRICH_RECENT`] are used.
    #[must_use]
    pub fn recent<I: IntoIterator<Item = S>, S: Into<String>>(mut self, messages: I) -> Self {
        self.recent_context = messages.into_iter().map(Into::into).collect();
        self
    }
    /// Returns at most `k` memories.
    #[must_use]
    pub fn top_k(mut self, k: usize) -> Self {
        self.top_k = k;
        self
    }
    /// Only memories created at or after `secs`.
    #[must_use]
    pub fn since(mut self, secs: i64) -> Self {
        self.since = Some(secs);
        self
    }
    /// Only memories created at or before `secs`.
    #[must_use]
    pub fn until(mut self, secs: i64) -> Self {
        self.until = Some(secs);
        self
    }
    /// Restricts sessions.
    #[must_use]
    pub fn session(mut self, scope: SessionScope) -> Self {
        self.session = scope;
        self
    }
    /// Dense or hybrid.
    #[must_use]
    pub fn mode(mut self, mode: SearchMode) -> Self {
        self.mode = mode;
        self
    }
    /// Turns time decay and importance on or off.
    #[must_use]
    pub fn rerank(mut self, on: bool) -> Self {
        self.rerank = on;
        self
    }
    /// Measures ages from `secs` instead of now.
    #[must_use]
    pub fn now(mut self, secs: i64) -> Self {
        self.now = Some(secs);
        self
    }
    /// Also returns retired (superseded) memories, e.g. to audit what consolidation retired.
    #[must_use]
    pub fn include_retired(mut self, on: bool) -> Self {
        self.include_retired = on;
        self
    }
    /// Only memories whose importance is at least `min` (clamped to `[0, 1]`; NaN filters
    /// nothing).
    #[must_use]
    pub fn min_importance(mut self, min: f32) -> Self {
        self.min_importance = if min.is_nan() { None } else { Some(min.clamp(0.0, 1.0)) };
        self
    }

    /// The text of the main dense search: the question alone. The keyword search uses it too,
    /// since words of older messages would match memories about those instead.
    pub fn dense_text(&self) -> String {
        self.query.clone()
    }

    /// The text of the second dense search when the query has recent context: the last
    /// [`ENRICH_RECENT`] recent messages, then the question (see [`enriched_query`]). Its hits
    /// are fused with the question's at
    /// [`RerankConfig::context_weight`](crate::RerankConfig::context_weight).
    pub fn context_text(&self) -> Option<String> {
        let recent = self.recent_context.iter().any(|m| !m.trim().is_empty());
        recent.then(|| enriched_query(&self.query, &self.recent_context))
    }

    /// How many candidates to fetch before reranking: enough that decay and importance can
    /// promote a memory from below the top k.
    pub fn candidates(&self) -> usize {
        (self.top_k * 4).max(20)
    }
}

/// The enriched query: up to [`ENRICH_RECENT`] recent messages and the question, one per line.
///
/// ```
/// use mnemograph_memory::enriched_query;
/// let recent = ["a".to_string(), "b".into(), "c".into(), "d".into(), "e".into()];
/// assert_eq!(enriched_query("q?", &recent), "b\nc\nd\ne\nq?");
/// assert_eq!(enriched_query("q?", &[]), "q?");
/// ```
pub fn enriched_query(question: &str, recent: &[String]) -> String {
    let start = recent.len().saturating_sub(ENRICH_RECENT);
    let mut parts: Vec<&str> = recent[start..].iter().map(String::as_str).collect();
    parts.push(question);
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn hit() -> MemoryHit {
        let m = NewMemory::turn("ada", "monday", "Where do I live?", "Lisbon").importance(0.75);
        MemoryHit { record: MemoryRecord::saved(7, m, 100), relevance: 0.5, score: 0.25 }
    }

    #[test]
    fn a_hit_serializes_flat_and_reads_back_equal() {
        let value = serde_json::to_value(hit()).unwrap();
        assert_eq!(value["id"], 7);
        assert_eq!(value["content"], "User: Where do I live?\nAssistant: Lisbon");
        assert_eq!(value["metadata"], json!({"type": "dialogue_turn"}));
        assert_eq!(value["score"], 0.25);
        assert!(value.get("record").is_none(), "the record's fields are not nested");
        assert_eq!(serde_json::from_value::<MemoryHit>(value).unwrap(), hit());
    }

    #[test]
    fn a_hit_without_role_or_metadata_reads_them_as_empty() {
        let value = json!({
            "id": 7, "user_id": "ada", "session_id": "monday", "content": "c",
            "created_at": 100, "importance": 0.75, "relevance": 0.5, "score": 0.25,
        });
        let read: MemoryHit = serde_json::from_value(value).unwrap();
        assert_eq!((read.record.role.as_str(), read.record.metadata.len()), ("", 0));
        assert_eq!((read.record.id, read.score), (7, 0.25));
        let missing_score = json!({"id": 7, "user_id": "ada", "session_id": "m", "content": "c",
            "created_at": 1, "importance": 0.5, "relevance": 0.5});
        assert!(serde_json::from_value::<MemoryHit>(missing_score).is_err());
    }
}
