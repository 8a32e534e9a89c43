//! The parity cases on MySQL: paused threads handed between Python LangGraph (its own
//! `PyMySQLSaver`) and mnemograph-core (`MySqlCheckpointer`) through one database, in both
//! directions, and the rows each side leaves compared (`bytes.rs`).

use e2e::{mysql_server, skip};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::handoff::{ends_in, python_interpreter, Peer, Side};

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

/// The saver on the shared database and the Python side; `None` (after saying why) when either
/// is missing outside CI.
pub(crate) async fn setup() -> Option<(MySqlCheckpointer, Peer)> {
    let python = python_interpreter()?;
    if let Err(e) = DATABASE_READY.get_or_init(prepare_database).await {
        skip("MySQL", e);
        return None;
    }
    let url = format!("{}/{DATABASE}", mysql_server());
    let saver = MySqlCheckpointer::connect(&url).await.expect("connect");
    Some((saver, Peer { python, url, backend: "MySQL", threads: "" }))
}

/// Both directions of one case must end in `expected`.
async fn both_ways(case: &str, case_ops: (Vec<Value>, Value), first: Side) {
    if let Some((saver, peer)) = setup().await {
        ends_in(&peer, &crate::cases::graph(case, saver), case, case_ops, first).await;
    }
}

use crate::bytes::same_rows;

crate::every_case!();
