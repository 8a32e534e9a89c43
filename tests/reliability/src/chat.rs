//! The graph under test: a two-node chat turn over the `add_messages` reducer.
//!
//! `START -> plan -> answer -> END` on [`MessagesState`]: a turn is one human message, then `plan`
//! adds `plan: <text>` and `answer` adds `answer: <text>`. With the default durability a turn
//! writes four checkpoints (input, START, plan, answer) and two tasks' pending writes, so it
//! exercises every write path of a saver, and its expected result is known exactly.

use std::sync::Arc;
use std::time::Duration;

use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::messages::{Message, MessageType, MessagesState, MessagesStateUpdate};
use mnemograph_core::{CompiledGraph, Result, StateGraph, END, START};

/// The text of the last human message.
fn last_human(state: &MessagesState) -> String {
    let human = state.messages.iter().rev().find(|m| m.kind() == MessageType::Human);
    human.map(Message::text).unwrap_or_default()
}

/// A node's work: answers the last human message with `<prefix>: <text>`, after `delay` (standing
/// in for a model call; zero for none).
async fn respond(state: MessagesState, prefix: &'static str, delay: Duration) -> Result<MessagesStateUpdate> {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let text = format!("{prefix}: {}", last_human(&state));
    Ok(MessagesStateUpdate::messages(vec![Message::ai(text)]))
}

/// The chat graph on `saver`; each node waits `node_delay` before answering.
///
/// # Panics
/// Never: the graph is fixed and valid.
pub fn graph(saver: Arc<dyn DynCheckpointer>, node_delay: Duration) -> CompiledGraph<MessagesState> {
    let graph = StateGraph::<MessagesState>::new()
        .add_node("plan", move |s: MessagesState| respond(s, "plan", node_delay))
        .add_node("answer", move |s: MessagesState| respond(s, "answer", node_delay))
        .add_edge(START, "plan")
        .add_edge("plan", "answer")
        .add_edge("answer", END);
    graph.compile().expect("the chat graph is valid").with_shared_checkpointer(saver)
}

/// The input of a turn: one human message.
pub fn say(text: &str) -> MessagesStateUpdate {
    MessagesStateUpdate::messages(vec![Message::human(text)])
}

/// The three messages a committed turn adds, in order.
pub fn turn(text: &str) -> [String; 3] {
    [text.to_owned(), format!("plan: {text}"), format!("answer: {text}")]
}

/// The texts of a state's messages.
pub fn texts(state: &MessagesState) -> Vec<String> {
    state.messages.iter().map(Message::text).collect()
}
