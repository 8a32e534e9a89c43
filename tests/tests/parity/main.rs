//! Parity for paused threads: a thread that stops at an interrupt, a breakpoint or a failure is
//! handed between Python LangGraph (its own `PyMySQLSaver`) and mnemograph-core (`MySqlCheckpointer`)
//! through one MySQL database, one operation at a time, each side taking every other turn.
//!
//! After every operation both sides read the thread — `get_state` and `get_state_history`: values,
//! next, tasks with their errors and interrupts, metadata, checkpoint and parent ids — and the two
//! readings must be equal field by field. Ids are not masked: checkpoint, task and interrupt ids
//! are deterministic, so a side that computed one differently fails the comparison.
//!
//! `tests/python/parity.py` is the Python half; `cases.rs` builds the same graphs. Each case runs
//! in both directions (Rust first, Python first). Needs `LANGGRAPH_PYTHON` (set by
//! `scripts/test.sh`) and MariaDB/MySQL at `MYSQL_URL`; without them the tests print why and
//! pass, unless `CI` is set.
//!
//! `sqlite.rs` runs every case, both ways and row for row, on SQLite: Python's `SqliteSaver` and
//! `SqliteCheckpointer` sharing one database file; `postgres.rs` likewise on PostgreSQL
//! (`DATABASE_URL`): Python's `PostgresSaver` and `PostgresCheckpointer` sharing one database.

/// For every case, a module with the handoff in both directions and the row comparison on one
/// backend: `rust_first`, `python_first` and `same_rows` call the backend module's
/// `both_ways(case, (ops, expected), first)` and `same_rows(case, ops)`.
macro_rules! every_case {
    () => {
        crate::every_case! {
            interrupt_in_a_node: "interrupt_node" => interrupt_node;
            two_interrupts_in_one_node: "double_interrupt" => double_interrupt;
            interrupts_resumed_by_id: "interrupts_by_id" => interrupts_by_id;
            interrupt_inside_a_subgraph: "subgraph_interrupt" => subgraph_interrupt;
            static_breakpoints: "breakpoints" => breakpoints;
            join_edge_at_a_breakpoint: "join_breakpoint" => join_breakpoint;
            push_fan_out_failed_half_way: "push_failure" => push_failure;
            update_state_as_node: "update_state" => update_state;
            time_travel_fork: "fork" => fork;
            command_as_input: "command" => command_at_an_interrupt;
            command_with_resume: "command_resume" => command_with_resume;
        }
    };
    ($($module:ident: $case:literal => $ops:ident;)*) => {$(
        mod $module {
            use crate::Side;

            #[tokio::test]
            async fn rust_first() {
                super::both_ways($case, crate::$ops(), Side::Rust).await;
            }

            #[tokio::test]
            async fn python_first() {
                super::both_ways($case, crate::$ops(), Side::Python).await;
            }

            #[tokio::test]
            async fn same_rows() {
                super::same_rows($case, &crate::$ops().0).await;
            }
        }
    )*};
}
use every_case;

mod bytes;
mod cases;
mod postgres;
mod postgres_rows;
mod sqlite;
mod sqlite_rows;
mod view;

use std::collections::BTreeMap;
use std::process::Command;

use e2e::{mysql_server, skip};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::ListOptions;
use mnemograph_core::prelude::*;
use mnemograph_core::Resume;
use serde_json::{json, Value};
use tokio::sync::OnceCell;

use cases::{SUpdate, FAILING, S};

const DATABASE: &str = "graph_parity";

/// Creates the test database once per test process: `Ok(())`, or why it cannot be had.
static DATABASE_READY: OnceCell<Result<(), String>> = OnceCell::const_new();

async fn prepare_database() -> Result<(), String> {
    let admin = MySqlCheckpointer::connect(&format!("{}/information_schema", mysql_server()))
        .await
        .map_err(|e| e.to_string())?;
    // LangGraph's own SELECT needs the server's default collation, so none is forced here.
    for sql in [format!("DROP DATABASE IF EXISTS `{DATABASE}`"), format!("CREATE DATABASE `{DATABASE}`")] {
        sqlx::raw_sql(&sql).execute(admin.pool()).await.map_err(|e| e.to_string())?;
    }
    let saver = MySqlCheckpointer::connect(&format!("{}/{DATABASE}", mysql_server()))
        .await
        .map_err(|e| e.to_string())?;
    saver.setup().await.map(drop).map_err(|e| e.to_string())
}

/// Python's interpreter (`LANGGRAPH_PYTHON`); `None` (after saying why) when it is missing
/// outside CI.
fn python_interpreter() -> Option<String> {
    let python = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty());
    if python.is_none() {
        skip("Python LangGraph", "LANGGRAPH_PYTHON is not set (scripts/python-peer.sh makes one)");
    }
    python
}

/// The saver on the shared database and the Python side; `None` (after saying why) when either
/// is missing outside CI.
async fn setup() -> Option<(MySqlCheckpointer, Peer)> {
    let python = python_interpreter()?;
    if let Err(e) = DATABASE_READY.get_or_init(prepare_database).await {
        skip("MySQL", e);
        return None;
    }
    let url = format!("{}/{DATABASE}", mysql_server());
    let saver = MySqlCheckpointer::connect(&url).await.expect("connect");
    Some((saver, Peer { python, url, backend: "MySQL", threads: "" }))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Rust,
    Python,
}

/// Python LangGraph on one backend: how `tests/python/parity.py` reaches the data the Rust saver
/// of the same backend holds.
struct Peer {
    /// The interpreter.
    python: String,
    /// The script's first argument: the database URL, or `sqlite:<file>`.
    url: String,
    /// The backend's name, for failures.
    backend: &'static str,
    /// Starts every thread id, keeping apart backends that share names (one SQLite file holds
    /// threads of several runs of the same case names).
    threads: &'static str,
}

/// Python's view of `thread` after performing `op` (or only reading, for `Value::Null`).
fn python(peer: &Peer, thread: &str, case: &str, op: &Value) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/parity.py");
    let out = Command::new(&peer.python)
        .arg(script)
        .arg(&peer.url)
        .arg(thread)
        .arg(case)
        .arg(op.to_string())
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python failed on {op}:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("python printed JSON")
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
async fn ends_in(
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
async fn same_rows_on(
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

/// Both directions of one case on MySQL must end in `expected`.
async fn both_ways(case: &str, ops: &[Value], expected: Value, first: Side) {
    if let Some((saver, peer)) = setup().await {
        ends_in(&peer, &cases::graph(case, saver), case, (ops.to_vec(), expected), first).await;
    }
}

fn interrupt_node() -> (Vec<Value>, Value) {
    let ops =
        vec![json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "resume", "value": "Ada"})];
    (ops, json!({"log": ["start", "ask:Ada"], "answer": "Ada"}))
}

#[tokio::test]
async fn parity_interrupt_in_a_node_rust_first() {
    let (ops, expected) = interrupt_node();
    both_ways("interrupt_node", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_interrupt_in_a_node_python_first() {
    let (ops, expected) = interrupt_node();
    both_ways("interrupt_node", &ops, expected, Side::Python).await;
}

fn double_interrupt() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "resume", "value": "x"}),
        json!({"op": "resume", "value": "y"}),
    ];
    (ops, json!({"log": ["start", "x+y"]}))
}

/// A node with two `interrupt()` calls, answered one at a time by alternating sides: the second
/// side finds the first answer recorded and must not ask again.
#[tokio::test]
async fn parity_two_interrupts_in_one_node_rust_first() {
    let (ops, expected) = double_interrupt();
    both_ways("double_interrupt", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_two_interrupts_in_one_node_python_first() {
    let (ops, expected) = double_interrupt();
    both_ways("double_interrupt", &ops, expected, Side::Python).await;
}

fn interrupts_by_id() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "resume_by_node", "answers": {"a": "x"}}),
        json!({"op": "resume_by_node", "answers": {"b": "y"}}),
    ];
    (ops, json!({"log": ["start", "a:x", "b:y"]}))
}

/// Two parallel nodes interrupt; each is answered by id in a run of its own.
#[tokio::test]
async fn parity_interrupts_resumed_by_id_rust_first() {
    let (ops, expected) = interrupts_by_id();
    both_ways("interrupts_by_id", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_interrupts_resumed_by_id_python_first() {
    let (ops, expected) = interrupts_by_id();
    both_ways("interrupts_by_id", &ops, expected, Side::Python).await;
}

fn subgraph_interrupt() -> (Vec<Value>, Value) {
    let ops =
        vec![json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "resume", "value": "Ada"})];
    // The child returns its whole state, so the shared `log` reducer applies its copy again.
    (ops, json!({"log": ["start", "start", "ask:Ada", "after"], "answer": "Ada"}))
}

#[tokio::test]
async fn parity_interrupt_inside_a_subgraph_rust_first() {
    let (ops, expected) = subgraph_interrupt();
    both_ways("subgraph_interrupt", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_interrupt_inside_a_subgraph_python_first() {
    let (ops, expected) = subgraph_interrupt();
    both_ways("subgraph_interrupt", &ops, expected, Side::Python).await;
}

fn breakpoints() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "continue"}),
        json!({"op": "continue"}),
    ];
    (ops, json!({"log": ["start", "a", "b", "c"]}))
}

/// `interrupt_before=["b"]` and `interrupt_after=["c"]`, continued with `invoke(None)`.
#[tokio::test]
async fn parity_static_breakpoints_rust_first() {
    let (ops, expected) = breakpoints();
    both_ways("breakpoints", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_static_breakpoints_python_first() {
    let (ops, expected) = breakpoints();
    both_ways("breakpoints", &ops, expected, Side::Python).await;
}

fn join_breakpoint() -> (Vec<Value>, Value) {
    let ops = vec![json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "continue"})];
    (ops, json!({"log": ["start", "a", "b", "c"]}))
}

/// A join edge (`add_edge(["a", "b"], "c")`) with a breakpoint before `c`: the paused thread
/// holds the barrier with both sources seen.
#[tokio::test]
async fn parity_join_edge_at_a_breakpoint_rust_first() {
    let (ops, expected) = join_breakpoint();
    both_ways("join_breakpoint", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_join_edge_at_a_breakpoint_python_first() {
    let (ops, expected) = join_breakpoint();
    both_ways("join_breakpoint", &ops, expected, Side::Python).await;
}

fn push_failure() -> (Vec<Value>, Value) {
    let ops =
        vec![json!({"op": "invoke", "input": {"log": ["start"]}, "fail": true}), json!({"op": "continue"})];
    // Every item once: the finished workers' pending writes are applied, not run again.
    (ops, json!({"log": ["start", "w1", "w2", "w3"]}))
}

/// Three pushed workers, one failing after the others finished: the step's pending writes are
/// the finished ones, and the other side re-runs only the failed worker.
#[tokio::test]
async fn parity_push_fan_out_failed_half_way_rust_first() {
    let (ops, expected) = push_failure();
    both_ways("push_failure", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_push_fan_out_failed_half_way_python_first() {
    let (ops, expected) = push_failure();
    both_ways("push_failure", &ops, expected, Side::Python).await;
}

fn update_state() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "update", "values": {"log": ["edited"]}, "as_node": "a"}),
        json!({"op": "continue"}),
    ];
    (ops, json!({"log": ["start", "a", "edited", "b", "c"]}))
}

/// `update_state(values, as_node="a")` at a breakpoint before `b`, then continued.
#[tokio::test]
async fn parity_update_state_as_node_rust_first() {
    let (ops, expected) = update_state();
    both_ways("update_state", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_update_state_as_node_python_first() {
    let (ops, expected) = update_state();
    both_ways("update_state", &ops, expected, Side::Python).await;
}

fn fork() -> (Vec<Value>, Value) {
    let ops =
        vec![json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "fork", "before": "b"})];
    (ops, json!({"log": ["start", "a", "b", "c"]}))
}

/// Time travel: one side runs the thread to the end, the other replays it from the checkpoint
/// before `b` (a `fork` checkpoint, then new ones; the old history stays).
#[tokio::test]
async fn parity_time_travel_fork_rust_first() {
    let (ops, expected) = fork();
    both_ways("fork", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_time_travel_fork_python_first() {
    let (ops, expected) = fork();
    both_ways("fork", &ops, expected, Side::Python).await;
}

/// Byte parity, one case at a time (see `bytes.rs`).
#[tokio::test]
async fn byte_parity_interrupt_in_a_node() {
    bytes::same_rows("interrupt_node", &interrupt_node().0).await;
}

#[tokio::test]
async fn byte_parity_two_interrupts_in_one_node() {
    bytes::same_rows("double_interrupt", &double_interrupt().0).await;
}

#[tokio::test]
async fn byte_parity_interrupts_resumed_by_id() {
    bytes::same_rows("interrupts_by_id", &interrupts_by_id().0).await;
}

#[tokio::test]
async fn byte_parity_interrupt_inside_a_subgraph() {
    bytes::same_rows("subgraph_interrupt", &subgraph_interrupt().0).await;
}

#[tokio::test]
async fn byte_parity_static_breakpoints() {
    bytes::same_rows("breakpoints", &breakpoints().0).await;
}

#[tokio::test]
async fn byte_parity_push_fan_out_failed_half_way() {
    bytes::same_rows("push_failure", &push_failure().0).await;
}

#[tokio::test]
async fn byte_parity_update_state_as_node() {
    bytes::same_rows("update_state", &update_state().0).await;
}

#[tokio::test]
async fn byte_parity_time_travel_fork() {
    bytes::same_rows("fork", &fork().0).await;
}

#[tokio::test]
async fn byte_parity_join_edge_at_a_breakpoint() {
    bytes::same_rows("join_breakpoint", &join_breakpoint().0).await;
}

fn command_at_an_interrupt() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        // No answer: `ask` interrupts again and `b` finishes beside it; the command's writes stay
        // pending on the interrupted checkpoint for the other side to find.
        json!({"op": "command", "update": {"log": ["edited"]}, "goto": ["b"]}),
        json!({"op": "resume", "value": "Ada"}),
        // On the finished thread: an update, a node and a push together.
        json!({"op": "command", "update": {"answer": "Bob"}, "goto": ["b", {"node": "b", "arg": {"item": "x"}}]}),
    ];
    (ops, json!({"log": ["start", "a", "edited", "ask:Ada", "b", "b", "b"], "answer": "Bob"}))
}

/// `Command(update=..., goto=...)` as input at an interrupt, resumed by the other side, then a
/// command on the finished thread: the null task's pending writes, the checkpoints and task ids
/// agree whichever side wrote them.
#[tokio::test]
async fn parity_command_as_input_rust_first() {
    let (ops, expected) = command_at_an_interrupt();
    both_ways("command", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_command_as_input_python_first() {
    let (ops, expected) = command_at_an_interrupt();
    both_ways("command", &ops, expected, Side::Python).await;
}

fn command_with_resume() -> (Vec<Value>, Value) {
    let ops = vec![
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "command", "update": {"log": ["edited"]}, "goto": ["b"], "resume": "Ada"}),
    ];
    (ops, json!({"log": ["start", "a", "edited", "ask:Ada", "b"], "answer": "Ada"}))
}

/// Update, goto and resume in one command, taken by the side that did not start the thread.
#[tokio::test]
async fn parity_command_with_resume_rust_first() {
    let (ops, expected) = command_with_resume();
    both_ways("command_resume", &ops, expected, Side::Rust).await;
}

#[tokio::test]
async fn parity_command_with_resume_python_first() {
    let (ops, expected) = command_with_resume();
    both_ways("command_resume", &ops, expected, Side::Python).await;
}
