//! A conversation moves between Python LangGraph and this runtime through one MySQL database: a
//! tool-calling thread written by Rust is continued by the Python graph (LangGraph's own
//! `PyMySQLSaver`, `ToolNode`, `tools_condition`) and the other way round, turn after turn.
//!
//! Both sides run the same graph — `agent` -> `tools_condition` -> `tools` -> `agent` — with the
//! same deterministic model (`tests/python/chat_graph.py` is the Python half). The model's answers
//! count the messages it was given, so a side that missed part of the other's history, or re-ran
//! a node the other had finished, gives a different transcript.
//!
//! Python's graph stores through LangGraph's `PyMySQLSaver`, or through this workspace's MySQL
//! saver by way of the `mnemograph_checkpoint` bindings (sync `invoke` in one direction, `ainvoke`
//! in the other): the same transcripts either way.
//!
//! Needs `LANGGRAPH_PYTHON` (set by `scripts/test.sh`, which also installs the bindings there) and
//! MariaDB/MySQL at `MYSQL_URL`; without them the tests print why and pass, unless `CI` is set.

use std::process::Command;

use e2e::{mysql_server, skip};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::messages::{Message, MessageType, ToolCall};
use mnemograph_core::prelude::*;
use mnemograph_models::{tool, tools_condition, ToolNode};
use serde_json::{json, Value};

/// A fresh database `name` with the checkpoint tables, and Python's interpreter; `None` (after
/// saying why) when either is missing outside CI.
async fn setup(name: &str) -> Option<(MySqlCheckpointer, String)> {
    let Some(python) = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty()) else {
        skip("Python LangGraph", "LANGGRAPH_PYTHON is not set (scripts/python-peer.sh makes one)");
        return None;
    };
    let admin = match MySqlCheckpointer::connect(&format!("{}/information_schema", mysql_server())).await {
        Ok(admin) => admin,
        Err(e) => {
            skip("MySQL", &e.to_string());
            return None;
        }
    };
    // LangGraph's own SELECT needs the server's default collation, so none is forced here.
    for sql in [format!("DROP DATABASE IF EXISTS `{name}`"), format!("CREATE DATABASE `{name}`")] {
        sqlx::raw_sql(&sql).execute(admin.pool()).await.expect("prepare the test database");
    }
    let saver = MySqlCheckpointer::connect(&format!("{}/{name}", mysql_server())).await.expect("connect");
    saver.setup().await.expect("setup");
    Some((saver, python))
}

/// The deterministic model of `chat_graph.py`, as a mnemograph-core node.
async fn agent(state: MessagesState) -> Result<MessagesStateUpdate> {
    let messages = &state.messages;
    let n = messages.len();
    let Some(last) = messages.last() else { return Ok(MessagesStateUpdate::default()) };
    let text = last.text();
    let reply = match last.kind() {
        MessageType::Human if text.contains("天气") => {
            let city = if text.contains("上海") { "上海" } else { "北京" };
            let call = ToolCall::new("weather", json!({ "city": city }), format!("call_{n}"));
            Message::ai("").with_tool_calls(vec![call])
        }
        MessageType::Tool => Message::ai(format!("{text}（共{n}条消息）")),
        _ => Message::ai(format!("收到「{text}」（共{n}条消息）")),
    };
    Ok(MessagesStateUpdate::messages(vec![reply]))
}

/// Arguments of the `weather` tool.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct City {
    /// The city to look up.
    city: String,
}

fn graph(saver: MySqlCheckpointer) -> CompiledGraph<MessagesState> {
    let weather = tool("weather", "Current weather of a city.", |c: City| async move {
        Ok::<_, std::convert::Infallible>(format!("{}：晴，25°C", c.city))
    });
    StateGraph::<MessagesState>::new()
        .add_node("agent", agent)
        .add_node("tools", ToolNode::new([weather.into()]))
        .add_edge(START, "agent")
        .add_conditional_edges("agent", tools_condition, ["tools", END])
        .add_edge("tools", "agent")
        .compile_with(saver)
        .expect("the chat graph compiles")
}

/// A message as `chat_graph.py`'s `describe` prints it.
fn describe(m: &Message) -> Value {
    let calls: Vec<Value> = m.tool_calls().iter().map(|c| json!([c.name, c.args, c.id])).collect();
    json!({
        "type": m.kind().as_str(),
        "content": m.text(),
        "id": m.id(),
        "tool_calls": calls,
        "tool_call_id": m.tool_call_id(),
    })
}

/// Python's side of a test: its interpreter and the saver `chat_graph.py` stores through.
struct Peer {
    python: String,
    /// `pymysql` (LangGraph's own saver), `mnemograph` or `mnemograph-async` (the bindings).
    saver: &'static str,
}

/// The peer with `saver`; `None` (after saying why) when the bindings it needs are not
/// installed, outside CI.
fn peer(python: String, saver: &'static str) -> Option<Peer> {
    if saver != "pymysql" {
        let found = Command::new(&python).args(["-c", "import mnemograph_checkpoint"]).output();
        if !found.is_ok_and(|o| o.status.success()) {
            skip(
                "the mnemograph_checkpoint bindings",
                "not installed (bash scripts/python-bindings.sh installs them)",
            );
            return None;
        }
    }
    Some(Peer { python, saver })
}

/// Runs one turn per message in Python on `thread` and returns what it printed.
fn python_turns(peer: &Peer, db: &str, thread: &str, turns: &[&str]) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/chat_graph.py");
    let out = Command::new(&peer.python)
        .arg(script)
        .args(["--saver", peer.saver])
        .arg(format!("{}/{db}", mysql_server()))
        .arg(thread)
        .args(turns)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "python failed:\n{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("python printed JSON")
}

/// Runs one turn per message in Rust on `thread` and returns the final messages.
async fn rust_turns(graph: &CompiledGraph<MessagesState>, thread: &str, turns: &[&str]) -> Vec<Message> {
    let config = RunConfig::thread(thread);
    let mut messages = Vec::new();
    for turn in turns {
        let input = MessagesStateUpdate::messages(vec![Message::human(*turn)]);
        messages = graph.invoke(input, &config).await.expect("rust turn").into_state().messages;
    }
    messages
}

/// `(type, content)` of each message, the part of the transcript both sides must agree on.
fn transcript(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| (m["type"].as_str().unwrap_or("?").into(), m["content"].as_str().unwrap_or("?").into()))
        .collect()
}

fn expected(lines: &[(&str, &str)]) -> Vec<(String, String)> {
    lines.iter().map(|(t, c)| ((*t).to_owned(), (*c).to_owned())).collect()
}

#[tokio::test]
async fn python_graph_continues_a_thread_written_by_rust() {
    python_continues_rust("py_continue_rust", "pymysql").await;
}

/// The same conversation with Python's graph on the Rust saver, through the bindings.
#[tokio::test]
async fn python_graph_on_the_bindings_continues_a_thread_written_by_rust() {
    python_continues_rust("py_bindings_continue_rust", "mnemograph").await;
}

async fn python_continues_rust(db: &str, saver: &'static str) {
    let Some((saver_rs, python)) = setup(db).await else { return };
    let Some(python) = peer(python, saver) else { return };
    let saver = saver_rs;
    let graph = graph(saver);
    let thread = "u1:rust-first";

    let rust = rust_turns(&graph, thread, &["北京天气怎么样？", "谢谢"]).await;
    let before: Vec<Value> = rust.iter().map(describe).collect();

    let py = python_turns(&python, db, thread, &["上海天气呢？"]);
    let messages = py["messages"].as_array().expect("messages");
    // Python read every message Rust wrote — ids, tool calls and tool-call ids included...
    assert_eq!(messages[..before.len()], before[..], "Python sees Rust's messages unchanged");
    // ...and ran only the new turn: its model saw all 7 messages, then 9.
    assert_eq!(
        transcript(messages),
        expected(&[
            ("human", "北京天气怎么样？"),
            ("ai", ""),
            ("tool", "北京：晴，25°C"),
            ("ai", "北京：晴，25°C（共3条消息）"),
            ("human", "谢谢"),
            ("ai", "收到「谢谢」（共5条消息）"),
            ("human", "上海天气呢？"),
            ("ai", ""),
            ("tool", "上海：晴，25°C"),
            ("ai", "上海：晴，25°C（共9条消息）"),
        ])
    );
    assert_eq!(messages[7]["tool_calls"], json!([["weather", {"city": "上海"}, "call_7"]]));
    assert_eq!(messages[8]["tool_call_id"], json!("call_7"));
    assert_eq!(py["next"], json!([]), "nothing left to run after Python's turn");

    // Back in Rust: the Python turn's messages decode as ours, and the thread goes on.
    let rust = rust_turns(&graph, thread, &["再见"]).await;
    let after: Vec<Value> = rust.iter().map(describe).collect();
    assert_eq!(after[..messages.len()], messages[..]);
    assert_eq!(rust[7].tool_calls(), [ToolCall::new("weather", json!({"city": "上海"}), "call_7")]);
    assert_eq!(rust.last().map(Message::text).as_deref(), Some("收到「再见」（共11条消息）"));

    // One history for both. Each turn adds an input checkpoint, the `__start__` step and one step
    // per node: Rust's two turns (5 + 3), Python's (5), Rust's (3): steps -1..=14, no gap, no fork.
    let history = python_turns(&python, db, thread, &[])["history"].clone();
    let steps: Vec<i64> = history.as_array().unwrap().iter().map(|h| h[1].as_i64().unwrap()).collect();
    let chain: Vec<i64> = (-1..=14).rev().collect();
    assert_eq!(steps, chain, "one unbroken chain of steps, newest first");
}

#[tokio::test]
async fn rust_graph_continues_a_thread_written_by_python() {
    rust_continues_python("rust_continue_py", "pymysql").await;
}

/// The same conversation with Python's graph (`ainvoke`) on the Rust saver, through the bindings.
#[tokio::test]
async fn rust_graph_continues_a_thread_written_through_the_bindings() {
    rust_continues_python("rust_continue_py_bindings", "mnemograph-async").await;
}

async fn rust_continues_python(db: &str, saver: &'static str) {
    let Some((saver_rs, python)) = setup(db).await else { return };
    let Some(python) = peer(python, saver) else { return };
    let saver = saver_rs;
    let graph = graph(saver);
    let thread = "u2:python-first";

    let py = python_turns(&python, db, thread, &["北京天气怎么样？", "谢谢"]);
    let written = py["messages"].as_array().expect("messages").clone();
    assert_eq!(written.len(), 6);

    let rust = rust_turns(&graph, thread, &["上海天气呢？"]).await;
    let ours: Vec<Value> = rust.iter().map(describe).collect();
    assert_eq!(ours[..written.len()], written[..], "Rust sees Python's messages unchanged");
    assert_eq!(rust[1].tool_calls(), [ToolCall::new("weather", json!({"city": "北京"}), "call_1")]);
    assert_eq!(rust[2].kind(), MessageType::Tool);
    assert_eq!(
        transcript(&ours[6..]),
        expected(&[
            ("human", "上海天气呢？"),
            ("ai", ""),
            ("tool", "上海：晴，25°C"),
            ("ai", "上海：晴，25°C（共9条消息）"),
        ])
    );

    // And Python continues what Rust added on top of its own turns.
    let py = python_turns(&python, db, thread, &["再见"]);
    let messages = py["messages"].as_array().expect("messages");
    assert_eq!(messages[..ours.len()], ours[..]);
    assert_eq!(messages.last().unwrap()["content"], json!("收到「再见」（共11条消息）"));
    assert_eq!(py["next"], json!([]));
}
