//! What the tests share: a fresh database file per call.

#![allow(dead_code, unreachable_pub)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use mnemograph_checkpoint_sqlite::SqliteCheckpointer;

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A path for a new database file, unique in this test run (the file does not exist yet).
pub fn fresh_path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sqlite-saver");
    std::fs::create_dir_all(&dir).expect("create the test directory");
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("{name}-{}-{n}.db", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// A saver on a new database file.
pub async fn fresh_saver(name: &str) -> (PathBuf, SqliteCheckpointer) {
    let path = fresh_path(name);
    let saver = SqliteCheckpointer::connect(path.to_str().expect("a UTF-8 path")).await.expect("open");
    (path, saver)
}
