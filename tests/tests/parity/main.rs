//! Parity for paused threads: a thread that stops at an interrupt, a breakpoint or a failure is
//! handed between Python LangGraph (its own `PyMySQLSaver`) and mnemograph-core (`MySqlCheckpointer`)
//! through one MySQL database, one operation at a time, each side taking every other turn.
//!
//! After every operation both sides read the thread — `get_state` and `get_state_history`: values,
//! next, tasks with their errors and interrupts, metadata, checkpoint and parent ids — and the two
//! readings must be equal field by field. Ids are not masked: checkpoint, task and interrupt ids
//! are deterministic, so a side that computed one differently fails the comparison.
//!
//! `tests/python/parity.py` is the Python half; `cases.rs` builds the same graphs and `scripts.rs`
//! lists the ops of each case; `handoff.rs` runs them, with
//! Python processes from `python_side.rs`; `mysql.rs` holds the MySQL side. Each case runs
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
            use crate::handoff::Side;

            #[tokio::test]
            async fn rust_first() {
                super::both_ways($case, crate::scripts::$ops(), Side::Rust).await;
            }

            #[tokio::test]
            async fn python_first() {
                super::both_ways($case, crate::scripts::$ops(), Side::Python).await;
            }

            #[tokio::test]
            async fn same_rows() {
                super::same_rows($case, &crate::scripts::$ops().0).await;
            }
        }
    )*};
}
use every_case;

mod bytes;
mod cases;
mod handoff;
mod mysql;
mod postgres;
mod postgres_rows;
mod python_side;
mod scripts;
mod sqlite;
mod sqlite_rows;
mod view;
