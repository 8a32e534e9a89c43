//! Parity on Postgres: a thread is handed between Python LangGraph (its own `PostgresSaver`) and
//! mnemograph-core (`PostgresCheckpointer`) through one database, the sides taking turns, paused
//! threads (interrupts, breakpoints, a failed step) included. After every operation both sides
//! read the thread (`get_state` and `get_state_history`, ids unmasked) and must agree. Then the
//! same operations, run by each language alone, must leave the same rows in the three tables.
//!
//! The graphs are the MySQL parity target's (`tests/parity/cases.rs`, `tests/python/parity.py`).
//! Needs `LANGGRAPH_PYTHON` and PostgreSQL at `DATABASE_URL`; without them the tests print why
//! and pass, unless `CI` is set.

#[path = "../parity/cases.rs"]
mod cases;
mod ops;
mod rows;
#[path = "../parity/view.rs"]
mod view;

use std::process::Command;

use e2e::{postgres_server, skip};
use mnemograph_checkpoint_postgres::PostgresCheckpointer;
use serde_json::{json, Value};
use tokio::sync::OnceCell;

const DATABASE: &str = "graph_parity";

/// Creates the test database once per test process: `Ok(())`, or why it cannot be had.
static DATABASE_READY: OnceCell<Result<(), String>> = OnceCell::const_new();

async fn prepare_database() -> Result<(), String> {
    let admin = PostgresCheckpointer::connect(&format!("{}/postgres", postgres_server()))
        .await
        .map_err(|e| e.to_string())?;
    for sql in [
        format!("DROP DATABASE IF EXISTS \"{DATABASE}\" WITH (FORCE)"),
        format!("CREATE DATABASE \"{DATABASE}\""),
    ] {
        sqlx::raw_sql(&sql).execute(admin.pool()).await.map_err(|e| e.to_string())?;
    }
    let saver = PostgresCheckpointer::connect(&url()).await.map_err(|e| e.to_string())?;
    saver.setup().await.map(drop).map_err(|e| e.to_string())
}

fn url() -> String {
    format!("{}/{DATABASE}", postgres_server())
}

/// The saver on the shared database and Python's interpreter; `None` (after saying why) when
/// either is missing outside CI.
async fn setup() -> Option<(PostgresCheckpointer, String)> {
    let python = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty());
    let Some(python) = python else {
        skip("Python LangGraph", "LANGGRAPH_PYTHON is not set (scripts/python-peer.sh makes one)");
        return None;
    };
    if !std::env::var("DATABASE_URL").is_ok_and(|u| !u.is_empty()) {
        skip("PostgreSQL", "DATABASE_URL is not set (scripts/test.sh sets it)");
        return None;
    }
    if let Err(e) = DATABASE_READY.get_or_init(prepare_database).await {
        skip("PostgreSQL", e);
        return None;
    }
    Some((PostgresCheckpointer::connect(&url()).await.expect("connect"), python))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Rust,
    Python,
}

/// Python's view of `thread` after performing `op` (or only reading, for `Value::Null`).
fn python(python: &str, thread: &str, case: &str, op: &Value) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/parity.py");
    let out = Command::new(python).arg(script).arg(url()).arg(thread).arg(case).arg(op.to_string()).output();
    let out = out.expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python failed on {op}:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("python printed JSON")
}

/// Runs `ops` on a new thread, `first` taking the first, the sides alternating; after each, both
/// sides' views must agree. Returns the final state's values.
async fn handoff(case: &str, first: Side, ops: &[Value]) -> Option<Value> {
    let (saver, py) = setup().await?;
    let graph = cases::graph(case, saver);
    let thread = format!("{case}-{}", if first == Side::Rust { "rust-first" } else { "python-first" });
    for (i, op) in ops.iter().enumerate() {
        let side = match (i % 2 == 0, first) {
            (true, side) => side,
            (false, Side::Rust) => Side::Python,
            (false, Side::Python) => Side::Rust,
        };
        let python_view = match side {
            Side::Python => python(&py, &thread, case, op),
            Side::Rust => {
                ops::rust(&graph, &thread, op).await;
                python(&py, &thread, case, &Value::Null)
            }
        };
        let rust_view = view::view(&graph, &thread).await;
        assert!(
            rust_view == python_view,
            "{case}: after op {i} ({op}) by {side:?}, the two sides read the thread differently\n\
             rust:   {}\npython: {}",
            serde_json::to_string_pretty(&rust_view).unwrap_or_default(),
            serde_json::to_string_pretty(&python_view).unwrap_or_default(),
        );
    }
    Some(view::view(&graph, &thread).await["state"]["values"].clone())
}

/// Both directions of `case` end in `expected`, and each language alone leaves the same rows.
async fn parity(case: &str, ops: &[Value], expected: Value) {
    for first in [Side::Rust, Side::Python] {
        let Some(values) = handoff(case, first, ops).await else { return };
        assert_eq!(values, expected, "{case}, {first:?} first: final values");
    }
    same_rows(case, ops).await;
}

/// Runs `ops` on `case` once in each language and compares the rows of the three tables.
async fn same_rows(case: &str, ops: &[Value]) {
    let Some((saver, py)) = setup().await else { return };
    let pool = saver.pool().clone();
    let graph = cases::graph(case, saver);
    let (rust_thread, python_thread) = (format!("bytes-{case}-rust"), format!("bytes-{case}-python"));
    for op in ops {
        ops::rust(&graph, &rust_thread, op).await;
        python(&py, &python_thread, case, op);
    }
    let ours = rows::rows(&pool, &rust_thread, case).await;
    let theirs = rows::rows(&pool, &python_thread, case).await;
    assert!(!ours["checkpoints"].as_array().is_none_or(Vec::is_empty), "{case}: Rust stored nothing");
    for table in ["checkpoints", "blobs", "writes"] {
        let (a, b) = (&ours[table], &theirs[table]);
        assert!(
            a == b,
            "{case}: the {table} rows of mnemograph-core and Python LangGraph differ (database {DATABASE})\n\
             rust:   {}\npython: {}",
            serde_json::to_string_pretty(a).unwrap_or_default(),
            serde_json::to_string_pretty(b).unwrap_or_default(),
        );
    }
}

#[tokio::test]
async fn interrupt_in_a_node() {
    let ops = [json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "resume", "value": "Ada"})];
    parity("interrupt_node", &ops, json!({"log": ["start", "ask:Ada"], "answer": "Ada"})).await;
}

/// A node with two `interrupt()` calls, answered one at a time by alternating sides.
#[tokio::test]
async fn two_interrupts_in_one_node() {
    let ops = [
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "resume", "value": "x"}),
        json!({"op": "resume", "value": "y"}),
    ];
    parity("double_interrupt", &ops, json!({"log": ["start", "x+y"]})).await;
}

/// Two parallel nodes interrupt; each is answered by id in a run of its own.
#[tokio::test]
async fn interrupts_resumed_by_id() {
    let ops = [
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "resume_by_node", "answers": {"a": "x"}}),
        json!({"op": "resume_by_node", "answers": {"b": "y"}}),
    ];
    parity("interrupts_by_id", &ops, json!({"log": ["start", "a:x", "b:y"]})).await;
}

/// The interrupt is in a subgraph: its checkpoints live in a namespace of their own.
#[tokio::test]
async fn interrupt_inside_a_subgraph() {
    let ops = [json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "resume", "value": "Ada"})];
    let expected = json!({"log": ["start", "start", "ask:Ada", "after"], "answer": "Ada"});
    parity("subgraph_interrupt", &ops, expected).await;
}

/// `interrupt_before=["b"]` and `interrupt_after=["c"]`, continued with `invoke(None)`.
#[tokio::test]
async fn static_breakpoints() {
    let ops = [
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "continue"}),
        json!({"op": "continue"}),
    ];
    parity("breakpoints", &ops, json!({"log": ["start", "a", "b", "c"]})).await;
}

/// A join edge with a breakpoint before its target: the paused thread holds the barrier.
#[tokio::test]
async fn join_edge_at_a_breakpoint() {
    let ops = [json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "continue"})];
    parity("join_breakpoint", &ops, json!({"log": ["start", "a", "b", "c"]})).await;
}

/// Three pushed workers, one failing after the others finished: the other side re-runs only the
/// failed one, from the pending writes.
#[tokio::test]
async fn push_fan_out_failed_half_way() {
    let ops = [json!({"op": "invoke", "input": {"log": ["start"]}, "fail": true}), json!({"op": "continue"})];
    parity("push_failure", &ops, json!({"log": ["start", "w1", "w2", "w3"]})).await;
}

/// `update_state(values, as_node="a")` at a breakpoint, then continued.
#[tokio::test]
async fn update_state_as_node() {
    let ops = [
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "update", "values": {"log": ["edited"]}, "as_node": "a"}),
        json!({"op": "continue"}),
    ];
    parity("update_state", &ops, json!({"log": ["start", "a", "edited", "b", "c"]})).await;
}

/// Time travel: one side runs the thread, the other replays it from an older checkpoint.
#[tokio::test]
async fn time_travel_fork() {
    let ops = [json!({"op": "invoke", "input": {"log": ["start"]}}), json!({"op": "fork", "before": "b"})];
    parity("fork", &ops, json!({"log": ["start", "a", "b", "c"]})).await;
}

/// `Command(update=..., goto=...)` as input at an interrupt, resumed by the other side.
#[tokio::test]
async fn command_as_input_at_an_interrupt() {
    let ops = [
        json!({"op": "invoke", "input": {"log": ["start"]}}),
        json!({"op": "command", "update": {"log": ["edited"]}, "goto": ["b"]}),
        json!({"op": "resume", "value": "Ada"}),
        json!({"op": "command", "update": {"answer": "Bob"}, "goto": ["b", {"node": "b", "arg": {"item": "x"}}]}),
    ];
    let expected = json!({"log": ["start", "a", "edited", "ask:Ada", "b", "b", "b"], "answer": "Bob"});
    parity("command", &ops, expected).await;
}
