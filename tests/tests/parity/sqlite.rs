//! The parity cases on SQLite: the same paused threads handed between Python LangGraph (its own
//! `SqliteSaver`) and mnemograph-core (`SqliteCheckpointer`) through one database file, in both
//! directions, and the rows each side leaves compared (`sqlite_rows.rs`).
//!
//! Needs `LANGGRAPH_PYTHON` with `langgraph-checkpoint-sqlite` (`scripts/python-peer.sh` installs
//! it); without it the tests print why and pass, unless `CI` is set.

use std::path::PathBuf;

use mnemograph_checkpoint_sqlite::SqliteCheckpointer;
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::handoff::{ends_in, python_interpreter, Peer, Side};

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

/// The saver on the file and the Python side; `None` (after saying why) when Python is missing
/// outside CI.
pub(crate) async fn setup() -> Option<(SqliteCheckpointer, Peer)> {
    let python = python_interpreter()?;
    let path = file().await;
    let saver = SqliteCheckpointer::connect(path.to_str().expect("a UTF-8 path")).await.expect("open");
    // Threads of their own: the MySQL cases run in the same process with the same case names.
    let peer =
        Peer { python, url: format!("sqlite:{}", path.display()), backend: "SQLite", threads: "sqlite-" };
    Some((saver, peer))
}

/// Both directions of one case must end in `expected`.
async fn both_ways(case: &str, case_ops: (Vec<Value>, Value), first: Side) {
    if let Some((saver, peer)) = setup().await {
        ends_in(&peer, &crate::cases::graph(case, saver), case, case_ops, first).await;
    }
}

use crate::sqlite_rows::same_rows;

crate::every_case!();
