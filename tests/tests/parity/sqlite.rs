//! The parity cases on SQLite: the same paused threads handed between Python LangGraph (its own
//! `SqliteSaver`) and mnemograph-core (`SqliteCheckpointer`) through one database file, in both
//! directions, and the rows each side leaves compared (`sqlite_rows.rs`).
//!
//! Needs `LANGGRAPH_PYTHON` with `langgraph-checkpoint-sqlite` (`scripts/python-peer.sh` installs
//! it); without it the tests print why and pass, unless `CI` is set.

use std::path::PathBuf;
use std::process::Command;

use e2e::skip;
use mnemograph_checkpoint_sqlite::SqliteCheckpointer;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::{rust, view, Side};

/// The database file of this test process, made once.
static FILE: OnceCell<PathBuf> = OnceCell::const_new();

async fn file() -> &'static PathBuf {
    FILE.get_or_init(|| async {
        let path =
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("parity-{}.sqlite", std::process::id()));
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
        path
    })
    .await
}

/// The saver on the file and Python's interpreter; `None` (after saying why) when Python is
/// missing outside CI.
pub(crate) async fn setup() -> Option<(SqliteCheckpointer, String)> {
    let python = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty());
    let Some(python) = python else {
        skip("Python LangGraph", "LANGGRAPH_PYTHON is not set (scripts/python-peer.sh makes one)");
        return None;
    };
    let saver =
        SqliteCheckpointer::connect(file().await.to_str().expect("a UTF-8 path")).await.expect("open");
    Some((saver, python))
}

/// Python's view of `thread` after performing `op` (or only reading, for `Value::Null`) on its
/// `SqliteSaver` over the same file.
pub(crate) async fn python(python: &str, thread: &str, case: &str, op: &Value) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/parity.py");
    let out = Command::new(python)
        .arg(script)
        .arg(format!("sqlite:{}", file().await.display()))
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

/// Runs `ops` on a new thread, `first` taking the first, the sides alternating; after each, both
/// sides' views must agree. Returns the final state's values.
async fn handoff(case: &str, first: Side, ops: &[Value]) -> Option<Value> {
    let (saver, py) = setup().await?;
    let graph = crate::cases::graph(case, saver);
    let order = if first == Side::Rust { "rust-first" } else { "python-first" };
    // Threads of their own: the MySQL cases run in the same process with the same case names.
    let thread = format!("sqlite-{case}-{order}");
    for (i, op) in ops.iter().enumerate() {
        let side = match (i % 2 == 0, first) {
            (true, side) => side,
            (false, Side::Rust) => Side::Python,
            (false, Side::Python) => Side::Rust,
        };
        let python_view = match side {
            Side::Python => python(&py, &thread, case, op).await,
            Side::Rust => {
                rust(&graph, &thread, op).await;
                python(&py, &thread, case, &Value::Null).await
            }
        };
        let rust_view = view::view(&graph, &thread).await;
        assert!(
            rust_view == python_view,
            "{case} on SQLite: after op {i} ({op}) by {side:?}, the two sides read the thread differently\n\
             rust:   {}\npython: {}",
            serde_json::to_string_pretty(&rust_view).unwrap_or_default(),
            serde_json::to_string_pretty(&python_view).unwrap_or_default(),
        );
    }
    Some(view::view(&graph, &thread).await["state"]["values"].clone())
}

/// Both directions of one case must end in `expected`.
async fn both_ways(case: &str, (ops, expected): (Vec<Value>, Value), first: Side) {
    if let Some(values) = handoff(case, first, &ops).await {
        assert_eq!(values, expected, "{case} on SQLite, {first:?} first: final values");
    }
}

/// For each `case => its operations`, a module with the handoff in both directions and the row
/// comparison.
macro_rules! sqlite_cases {
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
                crate::sqlite_rows::same_rows($case, &crate::$ops().0).await;
            }
        }
    )*};
}

sqlite_cases! {
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
