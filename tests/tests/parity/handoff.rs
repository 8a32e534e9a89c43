//! The hand-off itself: one side performs an op, both read the thread, the readings must agree;
//! and the row comparison of a case run once by each language alone.

use std::collections::BTreeMap;

use e2e::skip;
use mnemograph_core::checkpoint::ListOptions;
use mnemograph_core::prelude::*;
use mnemograph_core::Resume;
use serde_json::{json, Value};

use crate::cases::{SUpdate, FAILING, S};
use crate::python_side::python;
use crate::view;

/// Python's interpreter (`LANGGRAPH_PYTHON`); `None` (after saying why) when it is missing
/// outside CI.
pub(crate) fn python_interpreter() -> Option<String> {
    let python = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty());
    if python.is_none() {
        skip("Python LangGraph", "LANGGRAPH_PYTHON is not set (scripts/python-peer.sh makes one)");
    }
    python
}

#[derive(Debug, Clone, Copy, PartialEq)]
/// Which language performs an op.
pub(crate) enum Side {
    Rust,
    Python,
}

/// Python LangGraph on one backend: how `tests/python/parity.py` reaches the data the Rust saver
/// of the same backend holds.
pub(crate) struct Peer {
    /// The interpreter.
    pub(crate) python: String,
    /// The script's first argument: the database URL, or `sqlite:<file>`.
    pub(crate) url: String,
    /// The backend's name, for failures.
    pub(crate) backend: &'static str,
    /// Starts every thread id, keeping apart backends that share names (one SQLite file holds
    /// threads of several runs of the same case names).
    pub(crate) threads: &'static str,
}

fn log_update(values: &Value) -> SUpdate {
    let log: Option<Vec<String>> = values["log"]
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect());
    SUpdate::log(log.unwrap_or_default())
}

/// Performs `op` on `thread` with mnemograph-core.
async fn rust(graph: &CompiledGraph<S>, thread: &str, op: &Value) {
    let config = RunConfig::thread(thread);
    let fail = op["fail"] == json!(true);
    if fail {
        FAILING.lock().unwrap().get_or_insert_with(Default::default).insert(thread.to_owned());
    }
    let result = match op["op"].as_str().expect("an op") {
        "invoke" => graph.invoke(log_update(&op["input"]), &config).await.map(drop),
        "continue" => graph.invoke_input(Input::Resume, &config).await.map(drop),
        "resume" => {
            graph.invoke_input(Input::ResumeWith(Resume::Value(op["value"].clone())), &config).await.map(drop)
        }
        "resume_by_node" => {
            let state = graph.get_state(&config).await.expect("get_state");
            let mut answers = BTreeMap::new();
            for task in &state.tasks {
                if let Some(answer) = op["answers"].get(&task.name) {
                    answers.extend(task.interrupts.iter().map(|i| (i.id.clone(), answer.clone())));
                }
            }
            graph.invoke_input(Input::ResumeWith(Resume::ById(answers)), &config).await.map(drop)
        }
        "update" => {
            let as_node = op["as_node"].as_str();
            graph.update_state(&config, log_update(&op["values"]), as_node).await.map(drop)
        }
        "fork" => {
            let history = graph.get_state_history(&config, ListOptions::default()).await.expect("history");
            let before = op["before"].as_str().expect("a node");
            let target = history.iter().find(|s| s.next == [before]).expect("a checkpoint before the node");
            let id = target.config.as_ref().and_then(|c| c.checkpoint_id.clone()).expect("an id");
            graph.invoke_input(Input::Resume, &RunConfig::thread(thread).checkpoint_id(id)).await.map(drop)
        }
        "command" => graph.invoke_input(command_input(op), &config).await.map(drop),
        other => panic!("unknown op {other}"),
    };
    if fail {
        FAILING.lock().unwrap().get_or_insert_with(Default::default).remove(thread);
    }
    if let Err(e) = result {
        // The push_failure worker's failure is the point of its step.
        let mut root: &dyn std::error::Error = &e;
        while let Some(next) = root.source() {
            root = next;
        }
        assert_eq!(root.to_string(), "boom", "{op} failed: {e}");
    }
}

/// The `command` op's `Command(update=..., goto=..., resume=...)`: `update` writes `log` and
/// `answer`, in that order; a `goto` object is a push of a state with the given `item`.
fn command_input(op: &Value) -> Input<S> {
    let mut command = mnemograph_core::Command::<S>::new();
    if let Some(log) = op["update"].get("log") {
        command = command.update(log_update(&json!({ "log": log })));
    }
    if let Some(answer) = op["update"].get("answer") {
        command = command.update(SUpdate::answer(answer.as_str().map(str::to_owned)));
    }
    for to in op["goto"].as_array().into_iter().flatten() {
        command = match to.as_str() {
            Some(node) => command.goto(node),
            None => {
                let item = to["arg"]["item"].as_str().map(str::to_owned);
                command.goto(Push::new(to["node"].as_str().expect("a node"), S { item, ..S::default() }))
            }
        };
    }
    match op.get("resume") {
        Some(value) => Input::command_with(command, Resume::Value(value.clone())),
        None => Input::command(command),
    }
}

/// Runs `ops` on a new thread of `graph`, `first` taking the first, the sides alternating; after
/// each, both sides' views must agree. Returns the final state's values.
async fn handoff(peer: &Peer, graph: &CompiledGraph<S>, case: &str, first: Side, ops: &[Value]) -> Value {
    let order = if first == Side::Rust { "rust-first" } else { "python-first" };
    let thread = format!("{}{case}-{order}", peer.threads);
    let backend = peer.backend;
    for (i, op) in ops.iter().enumerate() {
        let side = match (i % 2 == 0, first) {
            (true, side) => side,
            (false, Side::Rust) => Side::Python,
            (false, Side::Python) => Side::Rust,
        };
        let python_view = match side {
            Side::Python => python(peer, &thread, case, op),
            Side::Rust => {
                rust(graph, &thread, op).await;
                python(peer, &thread, case, &Value::Null)
            }
        };
        let rust_view = view::view(graph, &thread).await;
        assert!(
            rust_view == python_view,
            "{case} on {backend}: after op {i} ({op}) by {side:?}, the two sides read the thread \
             differently\nrust:   {}\npython: {}",
            serde_json::to_string_pretty(&rust_view).unwrap_or_default(),
            serde_json::to_string_pretty(&python_view).unwrap_or_default(),
        );
    }
    view::view(graph, &thread).await["state"]["values"].clone()
}

/// The handoff of `case` with `first` taking the first op must end in `expected`.
pub(crate) async fn ends_in(
    peer: &Peer,
    graph: &CompiledGraph<S>,
    case: &str,
    (ops, expected): (Vec<Value>, Value),
    first: Side,
) {
    let values = handoff(peer, graph, case, first, &ops).await;
    let backend = peer.backend;
    assert_eq!(values, expected, "{case} on {backend}, {first:?} first: final values");
}

/// Runs `ops` on `case` once in each language and compares what `rows` reads of each thread,
/// table by table (the keys of its object).
pub(crate) async fn same_rows_on(
    peer: &Peer,
    graph: &CompiledGraph<S>,
    case: &str,
    ops: &[Value],
    rows: impl AsyncFn(&str) -> Value,
) {
    let rust_thread = format!("{}bytes-{case}-rust", peer.threads);
    let python_thread = format!("{}bytes-{case}-python", peer.threads);
    for op in ops {
        rust(graph, &rust_thread, op).await;
        python(peer, &python_thread, case, op);
    }
    let ours = rows(&rust_thread).await;
    let theirs = rows(&python_thread).await;
    let backend = peer.backend;
    assert!(!ours["checkpoints"].as_array().is_none_or(Vec::is_empty), "{case}: Rust stored nothing");
    for (table, a) in ours.as_object().expect("rows by table") {
        let b = &theirs[table];
        assert!(
            a == b,
            "{case}: the {backend} {table} rows of mnemograph-core and Python LangGraph differ\n\
             rust:   {}\npython: {}",
            serde_json::to_string_pretty(a).unwrap_or_default(),
            serde_json::to_string_pretty(b).unwrap_or_default(),
        );
    }
}
