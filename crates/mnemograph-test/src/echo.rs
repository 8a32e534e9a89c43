//! An echo chat graph and a full view of a checkpoint tuple, for savers' tests that compare a
//! read answered one way with the read answered another (a cached read against the full one, one
//! process's read against another's).

use mnemograph_core::checkpoint::{ChannelVersions, CheckpointTuple, Checkpointer};
use mnemograph_core::prelude::*;
use serde_json::{json, Map, Value};

/// The echo agent of the chat benchmarks: answers `echo: <last message>`.
///
/// # Errors
/// Never; the signature is a node's.
pub async fn echo_agent(s: MessagesState) -> Result<MessagesStateUpdate> {
    let last = s.messages.last().map(Message::text).unwrap_or_default();
    Ok(MessagesStateUpdate::messages(vec![Message::ai(format!("echo: {last}"))]))
}

/// `START → agent → END` over [`MessagesState`] with [`echo_agent`], saved by `saver`.
///
/// # Panics
/// Never in practice: the graph is valid, and a test wants to know at once if it is not.
pub fn echo_chat(saver: impl Checkpointer) -> CompiledGraph<MessagesState> {
    StateGraph::<MessagesState>::new()
        .add_node("agent", echo_agent)
        .add_edge(START, "agent")
        .add_edge("agent", END)
        .compile_with(saver)
        .expect("the echo graph is valid")
}

/// A human message update, the input of one turn.
pub fn say(text: &str) -> MessagesStateUpdate {
    MessagesStateUpdate::messages(vec![Message::human(text)])
}

/// Everything a tuple says, channel values and pending writes decoded, as one JSON value: two
/// reads of the same checkpoint compare equal exactly when they agree on every field.
///
/// # Panics
/// When a value does not decode as JSON (a test's data always does).
pub fn tuple_view(t: &CheckpointTuple) -> Value {
    let decode = |v: &mnemograph_core::value::ChannelValue| v.decode::<Value>().expect("decodable");
    let values: Map<String, Value> =
        t.checkpoint.channel_values.iter().map(|(k, v)| (k.to_string(), decode(v))).collect();
    let writes: Vec<Value> =
        t.pending_writes.iter().map(|w| json!([w.task_id, w.channel, decode(&w.value)])).collect();
    // `Arc<str>` has no serde impl without serde's `rc` feature, which this kit does not impose.
    let versions = |v: &ChannelVersions| -> Value {
        v.iter().map(|(channel, version)| (channel.to_string(), Value::from(&**version))).collect()
    };
    let seen: Map<String, Value> =
        t.checkpoint.versions_seen.iter().map(|(node, v)| (node.to_string(), versions(v))).collect();
    let updated =
        t.checkpoint.updated_channels.as_ref().map(|u| u.iter().map(|c| c.to_string()).collect::<Vec<_>>());
    json!({
        "config": format!("{:?}", t.config),
        "parent": format!("{:?}", t.parent_config),
        "metadata": t.metadata.to_json(),
        "id": t.checkpoint.id,
        "ts": t.checkpoint.ts,
        "versions": versions(&t.checkpoint.channel_versions),
        "seen": seen,
        "updated": updated,
        "values": values,
        "writes": writes,
    })
}
