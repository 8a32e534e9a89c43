//! The graph-level part of `fuzz_decode`: a compiled graph reading checkpoints and pending
//! writes that hold garbage.

use mnemograph_core::checkpoint::serde::loads_typed;
use mnemograph_core::checkpoint::{CheckpointConfig, CheckpointError, InMemoryCheckpointer};
use mnemograph_core::messages::Message;
use mnemograph_core::prelude::*;
use mnemograph_core::value::ChannelValue;
use mnemograph_core::Input;
use proptest::prelude::*;

use crate::config;
use crate::strategies::{apply, arb_encoding, arb_json, arb_mutation};

/// Cases for the graph-level property, which runs a small graph per case.
const GRAPH_CASES: u32 = 256;

// ---------------------------------------------------------------------------------------------
// Property: a graph reading corrupted checkpoints and pending writes
// ---------------------------------------------------------------------------------------------

#[derive(State, Clone, Default, Debug, PartialEq)]
struct Chat {
    #[reducer(add_messages)]
    messages: Vec<Message>,
    count: i64,
    #[reducer(append)]
    notes: Vec<String>,
}

fn chat_graph(saver: InMemoryCheckpointer) -> CompiledGraph<Chat> {
    StateGraph::<Chat>::new()
        .add_node("a", |s: Chat| async move {
            Ok::<_, Error>(ChatUpdate::count(s.count + 1).with_notes(vec!["a".to_owned()]))
        })
        .add_node("b", |_s: Chat, rt: Runtime| async move {
            let answer: String = rt.interrupt("continue?")?;
            Ok::<_, Error>(ChatUpdate::messages(vec![Message::human(answer)]))
        })
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile_with(saver)
        .expect("the graph is valid")
}

/// Channels the engine reads from checkpoints and pending writes, plus one it does not know.
const CHANNELS: [&str; 10] = [
    "messages",
    "count",
    "notes",
    "__start__",
    "branch:to:b",
    "__pregel_tasks",
    "__interrupt__",
    "__resume__",
    "__error__",
    "no_such_channel",
];

/// A garbage value: validated bytes, unvalidated bytes, or JSON of the wrong type.
fn arb_garbage() -> impl Strategy<Value = ChannelValue> {
    prop_oneof![
        (arb_encoding(), arb_mutation()).prop_map(|(b, m)| {
            let bytes = apply(b, &m);
            loads_typed("msgpack", &bytes).unwrap_or_else(|_| ChannelValue::encoded("msgpack", bytes))
        }),
        prop::collection::vec(any::<u8>(), 0..32).prop_map(|b| ChannelValue::encoded("bytes", b)),
        arb_json().prop_map(ChannelValue::new),
        arb_json().prop_map(|j| ChannelValue::Overwrite(Box::new(ChannelValue::new(j)))),
    ]
}

proptest! {
    #![proptest_config(config(GRAPH_CASES))]

    /// A checkpoint whose channel values and pending writes are garbage: `get_state`, the
    /// history and resuming return errors or states, never panic, and never hang.
    #[test]
    fn graph_reads_corrupted_checkpoints_without_panicking(
        values in prop::collection::vec((prop::sample::select(CHANNELS.to_vec()), arb_garbage()), 0..3),
        writes in prop::collection::vec((prop::sample::select(CHANNELS.to_vec()), arb_garbage()), 0..3),
        resume in arb_json(),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let graph = chat_graph(InMemoryCheckpointer::new());
            let saver = graph.checkpointer().expect("compiled with a saver").clone();
            let good = RunConfig::thread("good");
            let out = graph.invoke(ChatUpdate::default(), &good).await.expect("the clean run works");
            assert!(out.is_interrupted());
            let tuple = saver.get_tuple(&CheckpointConfig::thread("good")).await.expect("read");
            let tuple = tuple.expect("saved");

            // The same checkpoint on a new thread, with garbage planted.
            let mut cp = tuple.checkpoint.clone();
            for (channel, value) in values {
                if !cp.channel_versions.contains_key(channel) {
                    cp.channel_versions.insert(channel.into(), "9".into());
                }
                cp.channel_values.insert(channel.into(), value);
            }
            let versions = cp.channel_versions.clone();
            let target = CheckpointConfig::thread("bad");
            let at = saver
                .put(&target, cp, tuple.metadata.clone(), versions)
                .await
                .expect("the in-memory saver stores anything");
            let writes: Vec<(String, ChannelValue)> =
                writes.into_iter().map(|(c, v)| (c.to_owned(), v)).collect();
            saver.put_writes(&at, writes, "task-x", "").await.expect("stored");

            let bad = RunConfig::thread("bad");
            let limit = std::time::Duration::from_secs(10);
            let _ = tokio::time::timeout(limit, graph.get_state(&bad)).await.expect("get_state hung");
            let history = graph.get_state_history(&bad, Default::default());
            let _ = tokio::time::timeout(limit, history).await.expect("history hung");
            let resumed = graph.invoke_input(Input::resume(resume), &bad);
            let _ = tokio::time::timeout(limit, resumed).await.expect("resume hung");
            let _ = tokio::time::timeout(limit, graph.invoke_input(Input::Resume, &bad)).await.expect("hung");

            // The clean thread is untouched by all of that.
            let state = graph.get_state(&good).await.expect("the clean thread still reads");
            assert_eq!(state.values.count, 1);
            assert_eq!(state.next, ["b"]);
        });
    }
}

/// Plants a value on the `count` channel of a copy of a clean checkpoint, on thread `thread`.
async fn plant(graph: &CompiledGraph<Chat>, thread: &str, value: ChannelValue) -> String {
    graph.invoke(ChatUpdate::default(), &RunConfig::thread("clean")).await.expect("clean run");
    let saver = graph.checkpointer().expect("compiled with a saver");
    let tuple = saver.get_tuple(&CheckpointConfig::thread("clean")).await.expect("read").expect("saved");
    let mut cp = tuple.checkpoint;
    cp.channel_values.insert("count".into(), value);
    let id = cp.id.clone();
    let versions = cp.channel_versions.clone();
    saver.put(&CheckpointConfig::thread(thread), cp, tuple.metadata, versions).await.expect("stored");
    id
}

/// A stored value that does not decode fails the run with `CheckpointError::Decode` naming the
/// thread, the checkpoint and the channel.
#[tokio::test]
async fn resuming_a_corrupt_value_names_thread_checkpoint_and_channel() {
    let graph = chat_graph(InMemoryCheckpointer::new());
    let id = plant(&graph, "victim-thread", ChannelValue::encoded("msgpack", vec![0xa1, b'x'])).await;
    let err = graph.invoke_input(Input::resume("go"), &RunConfig::thread("victim-thread")).await.unwrap_err();
    let Error::Checkpoint(CheckpointError::Decode { thread_id, checkpoint_id, channel, .. }) = &err else {
        panic!("expected a decode error, got {err:?}");
    };
    assert_eq!((thread_id.as_str(), checkpoint_id, channel.as_str()), ("victim-thread", &id, "count"));
}

/// The same through `get_state`.
#[tokio::test]
async fn get_state_of_a_corrupt_value_names_the_thread() {
    let graph = chat_graph(InMemoryCheckpointer::new());
    plant(&graph, "victim-thread", ChannelValue::encoded("msgpack", vec![0xa1, b'x'])).await;
    let err = graph.get_state(&RunConfig::thread("victim-thread")).await.unwrap_err();
    let Error::Checkpoint(CheckpointError::Decode { thread_id, channel, .. }) = &err else {
        panic!("expected a decode error, got {err:?}");
    };
    assert_eq!((thread_id.as_str(), channel.as_str()), ("victim-thread", "count"));
}
