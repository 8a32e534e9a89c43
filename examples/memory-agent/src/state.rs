//! The graph's typed state and the recalled memories it carries between nodes.

use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::State;
use mnemograph_memory_milvus::MemoryHit;
use serde::{Deserialize, Serialize};

/// The agent's state: one per thread (`"{user_id}:{session_id}"`), checkpointed after every step.
///
/// `messages` is the short-term memory of this conversation; `retrieved_history` is what the
/// `retrieve` node found in long-term memory for the current question.
#[derive(State, Clone, Default, Debug)]
pub struct AgentState {
    /// The conversation of this thread, merged by message id (LangGraph's `add_messages`).
    #[reducer(add_messages)]
    pub messages: Vec<Message>,
    /// Whose long-term memories are read and written; every memory request is scoped to it.
    pub user_id: String,
    /// The conversation (session) this thread belongs to.
    pub session_id: String,
    /// Long-term memories recalled for the latest question, best first. Overwritten every turn.
    pub retrieved_history: Vec<Recalled>,
    /// Why each older memory the latest exchange superseded was retired (the decider's reasons);
    /// empty when it superseded none. Overwritten every turn.
    pub retired: Vec<String>,
}

/// One recalled memory with its scores, as kept in the state.
///
/// A copy of [`MemoryHit`] that can be checkpointed: state fields must be serde types, and
/// mnemograph-memory-milvus's records are not.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recalled {
    /// The memory's id in the long-term store.
    pub id: i64,
    /// Its owner (always the current user: retrieval is scoped to one user).
    pub user_id: String,
    /// The session it was saved in.
    pub session_id: String,
    /// The saved text, `"User: …\nAssistant: …"` for an exchange.
    pub content: String,
    /// When it was saved, in seconds since the epoch.
    pub created_at: i64,
    /// Importance in `[0, 1]` given when it was saved.
    pub importance: f32,
    /// Relevance to the question in `[0, 1]` (hybrid dense + BM25, fused with RRF).
    pub relevance: f64,
    /// The ranking score: relevance after time decay and importance.
    pub score: f64,
}

impl From<MemoryHit> for Recalled {
    fn from(hit: MemoryHit) -> Self {
        let r = hit.record;
        Self {
            id: r.id,
            user_id: r.user_id,
            session_id: r.session_id,
            content: r.content,
            created_at: r.created_at,
            importance: r.importance,
            relevance: hit.relevance,
            score: hit.score,
        }
    }
}

/// The index of the last human message, if any.
pub fn last_human(messages: &[Message]) -> Option<usize> {
    messages.iter().rposition(|m| m.kind() == MessageType::Human)
}

/// The text of the last message of `kind`, if any.
pub fn last_text(messages: &[Message], kind: MessageType) -> Option<String> {
    messages.iter().rev().find(|m| m.kind() == kind).map(Message::text)
}

/// The thread id of a user's session: short-term memory is kept per `(user, session)`.
///
/// ```
/// assert_eq!(memory_agent::thread_id("ada", "monday"), "ada:monday");
/// ```
pub fn thread_id(user_id: &str, session_id: &str) -> String {
    format!("{user_id}:{session_id}")
}
