use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use mnemograph_core::prelude::*;
use mnemograph_core::{GraphStream, Input, Resume};

use crate::support::*;

/// `values` emits the state after START (the input) and after each node: two chunks for one node.
#[tokio::test]
async fn test_stream_values_includes_input() {
    let g = StateGraph::<S>::new().add_node("bot", logger("bot")).add_edge(START, "bot").compile().unwrap();
    let events: Vec<_> = g.stream(Some(SUpdate::hello("hi")), &RunConfig::new()).collect().await;
    let values: Vec<S> = events
        .into_iter()
        .map(|e| match e.unwrap() {
            StreamEvent::Values(s) => s,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(values.len(), 2);
    assert_eq!(values[0].hello, "hi");
    assert!(values[0].log.is_empty());
    assert_eq!(values[1].log, ["bot"]);
}

/// Several modes at once, custom writes and message chunks carry node metadata, and no mode runs a
/// node twice.
#[tokio::test]
async fn test_stream_multiple_modes_never_rerun_nodes() {
    let runs = Arc::new(AtomicU32::new(0));
    let r = runs.clone();
    let g = StateGraph::<S>::new()
        .add_node("talk", move |_s: S, rt: Runtime| {
            r.fetch_add(1, Ordering::SeqCst);
            async move {
                rt.write(serde_json::json!({"progress": 50}));
                for tok in ["Hel", "lo"] {
                    rt.stream_message(Message::ai(tok));
                }
                Ok::<_, Error>(SUpdate::hello("Hello"))
            }
        })
        .add_edge(START, "talk")
        .compile()
        .unwrap();
    let modes = [
        StreamMode::Values,
        StreamMode::Updates,
        StreamMode::Messages,
        StreamMode::Custom,
        StreamMode::Tasks,
    ];
    let events: Vec<_> = g.stream(Some(SUpdate::default()), &RunConfig::new()).modes(modes).collect().await;
    let mut kinds = Vec::new();
    let mut tokens = String::new();
    for e in events {
        match e.unwrap() {
            StreamEvent::Values(_) => kinds.push("values"),
            StreamEvent::Updates { node, .. } => {
                assert_eq!(node, "talk");
                kinds.push("updates");
            }
            StreamEvent::Messages { chunk, metadata } => {
                assert_eq!(&*metadata.node, "talk");
                assert_eq!(metadata.step, 1);
                tokens.push_str(&chunk.text());
                kinds.push("messages");
            }
            StreamEvent::Custom { value, metadata } => {
                assert_eq!(value["progress"], 50);
                assert_eq!(&*metadata.node, "talk");
                kinds.push("custom");
            }
            StreamEvent::Task(_) => kinds.push("task"),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(tokens, "Hello");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(kinds, ["task", "custom", "messages", "messages", "updates", "task", "values"]);
}

/// A failing run ends its stream with the error.
#[tokio::test]
async fn test_stream_ends_with_error() {
    let g = StateGraph::<S>::new()
        .add_node("bad", |_s: S| async { Err::<SUpdate, _>(Error::UnknownNode("x".into())) })
        .add_edge(START, "bad")
        .compile()
        .unwrap();
    let events: Vec<_> =
        g.stream(Some(SUpdate::default()), &RunConfig::new()).modes([StreamMode::Updates]).collect().await;
    assert_eq!(events.len(), 1);
    assert!(matches!(events[0], Err(Error::Node { .. })));
}

/// Dropping the stream cancels the run: a slow node after it never completes.
#[tokio::test]
async fn test_dropping_stream_cancels_run() {
    let finished = Arc::new(AtomicU32::new(0));
    let f = finished.clone();
    let g = StateGraph::<S>::new()
        .add_node("slow", move |_s: S| {
            let f = f.clone();
            async move {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                f.fetch_add(1, Ordering::SeqCst);
                Ok::<_, Error>(SUpdate::default())
            }
        })
        .add_edge(START, "slow")
        .compile()
        .unwrap();
    let mut s = g.stream(Some(SUpdate::hello("x")), &RunConfig::new());
    let first = s.next().await.unwrap().unwrap();
    assert!(matches!(first, StreamEvent::Values(_)));
    drop(s);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(finished.load(Ordering::SeqCst), 0);
}

/// The `values` of a stream's events, in order.
async fn values_of(stream: GraphStream<S>) -> Vec<Vec<String>> {
    let events: Vec<_> = stream.collect().await;
    events
        .into_iter()
        .filter_map(|e| match e.unwrap() {
            StreamEvent::Values(s) => Some(s.log),
            _ => None,
        })
        .collect()
}

/// Resuming — an answer, a command, or no input — streams the state it resumes from before
/// anything runs, as LangGraph's `values` stream does; a thread with nothing left to run shows
/// it once. The sequences are Python's (`stream_mode="values"`, `InMemorySaver`).
#[tokio::test]
async fn test_stream_values_on_resume_starts_with_current_state() {
    let g = StateGraph::<S>::new()
        .add_node("a", logger("a"))
        .add_node("ask", |_s: S, rt: Runtime| async move {
            let answer: String = rt.interrupt("q")?;
            Ok::<_, Error>(SUpdate::log(vec![format!("ask:{answer}")]))
        })
        .add_node("b", logger("b"))
        .add_edge(START, "a")
        .add_edge("a", "ask")
        .add_edge("ask", "b")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let first = values_of(g.stream(SUpdate::log(vec!["in".into()]), &cfg)).await;
    assert_eq!(first, [vec!["in"], vec!["in", "a"]]);
    let resumed = values_of(g.stream(Input::ResumeWith(Resume::value("yes")), &cfg)).await;
    assert_eq!(resumed, [vec!["in", "a"], vec!["in", "a", "ask:yes"], vec!["in", "a", "ask:yes", "b"]]);
    let goto = values_of(g.stream(Input::command(Command::new().goto("b")), &cfg)).await;
    assert_eq!(goto, [vec!["in", "a", "ask:yes", "b"], vec!["in", "a", "ask:yes", "b", "b"]]);
    let nothing = values_of(g.stream(Input::Resume, &cfg)).await;
    assert_eq!(nothing, [vec!["in", "a", "ask:yes", "b", "b"]]);
}

/// The messages of a `messages` stream: (node, id, text) of each.
async fn streamed_messages(
    g: &CompiledGraph<MessagesState>,
    input: Vec<Message>,
) -> Vec<(String, String, String)> {
    let events: Vec<_> = g
        .stream(Some(MessagesStateUpdate::messages(input)), &RunConfig::new())
        .modes([StreamMode::Messages])
        .collect()
        .await;
    events
        .into_iter()
        .filter_map(|e| match e.unwrap() {
            StreamEvent::Messages { chunk, metadata } => {
                Some((metadata.node.to_string(), chunk.id().unwrap_or_default().to_owned(), chunk.text()))
            }
            _ => None,
        })
        .collect()
}

/// As LangGraph's message handler: the messages a node returns are streamed at its end, each
/// once (by id), but not those the state it read already held, nor one whose chunks were
/// streamed under its id.
#[tokio::test]
async fn test_messages_mode_streams_the_messages_nodes_return() {
    let g = StateGraph::<MessagesState>::new()
        .add_node("tool", |_: MessagesState| async {
            Ok::<_, Error>(MessagesStateUpdate::messages(vec![
                Message::ai("hello").with_id("m1"),
                Message::tool("result", "call-1").with_id("m2"),
            ]))
        })
        .add_node("again", |s: MessagesState| async move {
            // The state's own messages and the one just streamed come back: none is new.
            let mut echo = s.messages.clone();
            echo.push(Message::ai("hello, edited").with_id("m1"));
            Ok::<_, Error>(MessagesStateUpdate::messages(echo))
        })
        .add_node("model", |_: MessagesState, rt: Runtime| async move {
            for token in ["to", "kens"] {
                rt.stream_message(Message::ai(token).with_id("m3"));
            }
            Ok::<_, Error>(MessagesStateUpdate::messages(vec![Message::ai("tokens").with_id("m3")]))
        })
        .add_edge(START, "tool")
        .add_edge("tool", "again")
        .add_edge("again", "model")
        .compile()
        .unwrap();
    let seen = streamed_messages(&g, vec![Message::human("hi").with_id("h1")]).await;
    let t = |node: &str, id: &str, text: &str| (node.to_owned(), id.to_owned(), text.to_owned());
    assert_eq!(
        seen,
        [
            t("tool", "m1", "hello"),
            t("tool", "m2", "result"),
            t("model", "m3", "to"),
            t("model", "m3", "kens")
        ]
    );
}

/// A message a node returns without an id is streamed with the id the state then keeps.
#[tokio::test]
async fn test_messages_mode_names_a_returned_message_as_the_state_keeps_it() {
    let g = StateGraph::<MessagesState>::new()
        .add_node("bot", |_: MessagesState| async {
            Ok::<_, Error>(MessagesStateUpdate::messages(vec![Message::ai("no id yet")]))
        })
        .add_edge(START, "bot")
        .compile()
        .unwrap();
    let input = MessagesStateUpdate::messages(vec![Message::human("hi").with_id("h1")]);
    let events: Vec<_> = g
        .stream(Some(input), &RunConfig::new())
        .modes([StreamMode::Messages, StreamMode::Values])
        .collect()
        .await;
    let mut streamed = Vec::new();
    let mut kept = None;
    for event in events {
        match event.unwrap() {
            StreamEvent::Messages { chunk, .. } => {
                streamed.push((chunk.id().map(str::to_owned), chunk.text()))
            }
            StreamEvent::Values(s) => kept = s.messages.last().and_then(|m| m.id().map(str::to_owned)),
            _ => {}
        }
    }
    assert_eq!(streamed.len(), 1, "{streamed:?}");
    assert_eq!(streamed[0].1, "no id yet");
    assert!(streamed[0].0.is_some(), "streamed with an id");
    assert_eq!(streamed[0].0, kept, "the streamed message is the one the state keeps");
}
