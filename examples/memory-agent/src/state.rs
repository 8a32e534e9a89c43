//! The graph's typed state: the conversation, whose it is, and what long-term memory recalled.

use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::State;
use mnemograph_memory::MemoryHit;

use crate::when::TimeWindow;

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
    pub retrieved_history: Vec<MemoryHit>,
    /// Why each older memory the latest exchange superseded was retired (the decider's reasons);
    /// empty when it superseded none. Overwritten every turn.
    pub retired: Vec<String>,
    /// The time window the latest question named ("yesterday", "上周"), which recall was
    /// narrowed to; `None` when it named no time. Overwritten every turn.
    pub recall_window: Option<TimeWindow>,
    /// Whether the window of [`recall_window`](Self::recall_window) held no memory, so recall
    /// searched all time instead. Overwritten every turn.
    pub window_fallback: bool,
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

#[cfg(test)]
mod stored_state {
    use mnemograph_core::checkpoint::serde::{dumps_typed, loads_typed};
    use mnemograph_core::value::ChannelValue;
    use serde_json::json;

    use super::*;

    /// What a checkpoint stores for `retrieved_history`, read back as the state reads it.
    fn round_trip(value: &ChannelValue) -> Vec<MemoryHit> {
        let (kind, bytes) = dumps_typed(value).unwrap();
        loads_typed(&kind, &bytes).unwrap().decode().unwrap()
    }

    #[test]
    fn recalled_memories_survive_a_checkpoint() {
        let hits: Vec<MemoryHit> = serde_json::from_value(json!([{
            "id": 7, "user_id": "ada", "session_id": "monday", "role": "exchange",
            "content": "User: I live in Lisbon\nAssistant: Noted", "created_at": 100,
            "importance": 0.75, "metadata": {"type": "dialogue_turn"}, "relevance": 0.5, "score": 0.25,
        }]))
        .unwrap();
        assert_eq!(round_trip(&ChannelValue::new(hits.clone())), hits);
    }

    #[test]
    fn a_checkpoint_with_the_older_flat_form_still_loads() {
        // Before records were serde types, the state kept this copy of a hit: no role, no
        // metadata. A thread checkpointed then must resume.
        let older = json!([{
            "id": 7, "user_id": "ada", "session_id": "monday",
            "content": "User: I live in Lisbon\nAssistant: Noted", "created_at": 100,
            "importance": 0.75, "relevance": 0.5, "score": 0.25,
        }]);
        let hits = round_trip(&ChannelValue::new(older));
        assert_eq!(hits.len(), 1);
        assert_eq!(
            (hits[0].record.id, hits[0].record.session_id.as_str(), hits[0].score),
            (7, "monday", 0.25)
        );
        assert!(hits[0].record.role.is_empty() && hits[0].record.metadata.is_empty());
    }
}
