//! A crate that depends on mnemograph-core and nothing else, the way an application does.
//!
//! `scripts/check-features.sh` resolves its features (`cargo tree -e features -p downstream`)
//! and fails when mnemograph-core turns on anything that changes the rest of a program: serde_json's
//! `preserve_order` (object key order everywhere) or `float_roundtrip`, or tokio's multi-thread
//! runtime. Building it (part of every workspace build) shows mnemograph-core compiles with only the
//! features it asks for itself.

use mnemograph_core::prelude::*;

/// A conversation state.
#[derive(State, Clone, Default, Debug)]
pub struct Chat {
    /// The messages, merged by id.
    #[reducer(add_messages)]
    pub messages: Vec<Message>,
}

/// Replies to the last message.
async fn reply(chat: Chat) -> Result<ChatUpdate> {
    let text = chat.messages.last().map(Message::text).unwrap_or_default();
    Ok(ChatUpdate::messages(vec![Message::ai(format!("echo: {text}"))]))
}

/// A one-node graph with in-memory persistence.
///
/// # Errors
/// When the graph does not compile (it always does).
pub fn echo_graph() -> Result<CompiledGraph<Chat>> {
    StateGraph::<Chat>::new()
        .add_node("reply", reply)
        .add_edge(START, "reply")
        .add_edge("reply", END)
        .compile_with(InMemoryCheckpointer::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_compiles_with_graph_cores_own_features() {
        assert!(echo_graph().is_ok());
    }
}
