//! The graphs the SDK flows run, twins of `tests/python/graphs.py`.

use std::sync::Arc;
use std::time::Duration;

use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::prelude::*;
use mnemograph_core::store::{DynStore, InMemoryStore};
use mnemograph_core::BoxError;
use mnemograph_server::auth::Identity;
use mnemograph_server::{GraphSchemas, Server};

/// The state of every test graph: a log that nodes append to.
#[derive(State, Clone, Default, Debug, schemars::JsonSchema)]
pub(crate) struct Log {
    #[reducer(append)]
    pub(crate) log: Vec<String>,
}

fn append(entry: &'static str) -> impl Fn(Log) -> std::future::Ready<Result<LogUpdate>> + Clone {
    move |_s: Log| std::future::ready(Ok(LogUpdate::log(vec![entry.to_owned()])))
}

async fn ask(_s: Log, rt: Runtime) -> Result<LogUpdate> {
    let answer: String = rt.interrupt(serde_json::json!({"question": "approve?"}))?;
    Ok(LogUpdate::log(vec![format!("ask:{answer}")]))
}

async fn boom(_s: Log) -> Result<LogUpdate, BoxError> {
    Err("boom happened".into())
}

async fn remember(s: Log, rt: Runtime) -> Result<LogUpdate, BoxError> {
    let store = rt.store().ok_or("the server gives every graph its store")?;
    let labels = ["notes".to_owned(), "graph".to_owned()];
    store.put(&labels, "last", serde_json::json!({ "log": s.log }), None).await?;
    Ok(LogUpdate::log(vec!["remembered".to_owned()]))
}

/// Logs who started the run, as the server's authentication found it.
async fn whoami(_s: Log, rt: Runtime) -> Result<LogUpdate> {
    let user = Identity::of(rt.configurable()).map_or_else(|| "anonymous".to_owned(), |u| u.identity);
    Ok(LogUpdate::log(vec![format!("user:{user}")]))
}

/// Logs the `greeting` the run's configuration gives it, as an assistant's configuration does.
async fn greet(_s: Log, rt: Runtime) -> Result<LogUpdate> {
    let greeting = rt.configurable().get("greeting").and_then(|g| g.as_str()).unwrap_or("none");
    Ok(LogUpdate::log(vec![format!("greeting:{greeting}")]))
}

/// The pause before each token of a [`chat`] reply, as a chat model's tokens arrive over time;
/// `tests/python/graphs.py` types at the same pace.
const TOKEN_GAP: Duration = Duration::from_millis(30);

/// Streams `text` to the `messages` mode a character at a time as the AI message `id`, the way a
/// chat model adapter streams its tokens, and returns the whole message under the same id, so a
/// client merges the chunks and the stored message into one.
async fn type_out(rt: &Runtime, id: String, text: String) -> Message {
    for token in text.chars() {
        tokio::time::sleep(TOKEN_GAP).await;
        rt.stream_message(Message::ai(token.to_string()).with_id(id.clone()));
    }
    Message::ai(text).with_id(id)
}

/// Answers `You said: <the last message>`, streamed.
async fn echo(s: MessagesState, rt: Runtime) -> Result<MessagesStateUpdate> {
    let said = s.messages.last().map(Message::text).unwrap_or_default();
    // The position in the thread makes the id unique there, as a model's run id would.
    let id = format!("reply-{}", s.messages.len());
    Ok(MessagesStateUpdate::messages(vec![type_out(&rt, id, format!("You said: {said}")).await]))
}

/// Asks whether to send the reply, then answers `Approved: <the resume value>`, streamed.
async fn confirm(s: MessagesState, rt: Runtime) -> Result<MessagesStateUpdate> {
    let answer: String = rt.interrupt(serde_json::json!({"question": "Send this reply?"}))?;
    let id = format!("reply-{}", s.messages.len());
    Ok(MessagesStateUpdate::messages(vec![type_out(&rt, id, format!("Approved: {answer}")).await]))
}

/// `echo` → `confirm`: a chat that streams its reply token by token, then interrupts for
/// approval and streams a second reply once resumed.
pub(crate) fn chat() -> StateGraph<MessagesState> {
    StateGraph::<MessagesState>::new()
        .add_node("echo", echo)
        .add_node("confirm", confirm)
        .add_edge(START, "echo")
        .add_edge("echo", "confirm")
}

async fn slow(_s: Log) -> Result<LogUpdate> {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    Ok(LogUpdate::log(vec!["slow".to_owned()]))
}

/// `a` → `b`.
pub(crate) fn chain() -> StateGraph<Log> {
    StateGraph::<Log>::new()
        .add_node("a", append("a"))
        .add_node("b", append("b"))
        .add_edge(START, "a")
        .add_edge("a", "b")
}

/// A node that fails with "boom happened".
pub(crate) fn failing() -> StateGraph<Log> {
    StateGraph::<Log>::new().add_node("boom", boom).add_edge(START, "boom")
}

/// A server with `chain` (a → b), `approve` (a → ask, which interrupts → b), `failing`,
/// `sleepy` (1.5 s), `remembering` (writes the store), `whoami` (logs `user:<identity>`),
/// `configured` (logs `greeting:<configurable greeting>`) and `nested` (`chain` as the subgraph
/// `inner` → `after`), each with its state's JSON Schema, and [`chat`] (messages streamed token
/// by token, an interrupt), on an in-memory saver and store.
pub(crate) fn server() -> Server {
    server_on(Arc::new(InMemoryCheckpointer::new()), Arc::new(InMemoryStore::new()))
}

/// The graphs of [`server`] on `saver` and `store`.
pub(crate) fn server_on(saver: Arc<dyn DynCheckpointer>, store: Arc<dyn DynStore>) -> Server {
    let inner = chain().compile().expect("a test graph compiles");
    let chain = chain();
    let approve = StateGraph::<Log>::new()
        .add_node("a", append("a"))
        .add_node("ask", ask)
        .add_node("b", append("b"))
        .add_edge(START, "a")
        .add_edge("a", "ask")
        .add_edge("ask", "b");
    let failing = failing();
    let sleepy = StateGraph::<Log>::new().add_node("slow", slow).add_edge(START, "slow");
    let remembering = StateGraph::<Log>::new().add_node("remember", remember).add_edge(START, "remember");
    let whoami = StateGraph::<Log>::new().add_node("whoami", whoami).add_edge(START, "whoami");
    let configured = StateGraph::<Log>::new().add_node("greet", greet).add_edge(START, "greet");
    let nested = StateGraph::<Log>::new()
        .add_node("inner", inner)
        .add_node("after", append("after"))
        .add_edge(START, "inner")
        .add_edge("inner", "after");
    let server = Server::with_shared_saver(saver).with_shared_store(store);
    let graphs = [
        ("chain", chain),
        ("approve", approve),
        ("failing", failing),
        ("sleepy", sleepy),
        ("remembering", remembering),
        ("whoami", whoami),
        ("configured", configured),
        ("nested", nested),
    ];
    let server = graphs
        .into_iter()
        .try_fold(server, |server, (id, graph)| {
            server
                .graph(id, graph.compile().expect("a test graph compiles"))?
                .with_schemas(id, GraphSchemas::of_state::<Log>())
        })
        .expect("distinct graph ids");
    server.graph("chat", chat().compile().expect("the chat graph compiles")).expect("distinct graph ids")
}
