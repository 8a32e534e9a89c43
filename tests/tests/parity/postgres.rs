//! The parity cases on PostgreSQL: the same paused threads handed between Python LangGraph (its
//! own `PostgresSaver`) and mnemograph-core (`PostgresCheckpointer`) through one database
//! (`graph_parity` on the server of `DATABASE_URL`), in both directions, and the rows each side
//! leaves compared (`postgres_rows.rs`).
//!
//! Needs `LANGGRAPH_PYTHON` and PostgreSQL at `DATABASE_URL`; without them the tests print why
//! and pass, unless `CI` is set.

use e2e::{postgres_server, skip};
use mnemograph_checkpoint_postgres::PostgresCheckpointer;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::handoff::{ends_in, python_interpreter, Peer, Side};

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

/// The saver on the shared database and the Python side; `None` (after saying why) when either
/// is missing outside CI.
pub(crate) async fn setup() -> Option<(PostgresCheckpointer, Peer)> {
    let python = python_interpreter()?;
    if !std::env::var("DATABASE_URL").is_ok_and(|u| !u.is_empty()) {
        skip("PostgreSQL", "DATABASE_URL is not set (scripts/test.sh sets it)");
        return None;
    }
    if let Err(e) = DATABASE_READY.get_or_init(prepare_database).await {
        skip("PostgreSQL", e);
        return None;
    }
    let saver = PostgresCheckpointer::connect(&url()).await.expect("connect");
    Some((saver, Peer { python, url: url(), backend: "PostgreSQL", threads: "postgres-" }))
}

/// Both directions of one case must end in `expected`.
async fn both_ways(case: &str, case_ops: (Vec<Value>, Value), first: Side) {
    if let Some((saver, peer)) = setup().await {
        ends_in(&peer, &crate::cases::graph(case, saver), case, case_ops, first).await;
    }
}

use crate::postgres_rows::same_rows;

crate::every_case!();
