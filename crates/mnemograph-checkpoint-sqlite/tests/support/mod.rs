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

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version, now_iso};
use mnemograph_checkpoint::checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer,
};
use mnemograph_checkpoint::value::ChannelValue;

/// Saves a checkpoint at `step` holding `log` on `parent`, every channel new; returns its address.
pub async fn put_log(
    saver: &SqliteCheckpointer,
    parent: &CheckpointConfig,
    step: i64,
    log: ChannelValue,
) -> Result<CheckpointConfig, mnemograph_checkpoint::checkpoint::CheckpointError> {
    let mut cp = Checkpoint { v: 4, id: checkpoint_id(step), ts: now_iso(), ..Checkpoint::default() };
    cp.channel_values.insert("log".into(), log);
    cp.channel_versions.insert("log".into(), next_version(None).into());
    let new_versions = cp.channel_versions.clone();
    let metadata = CheckpointMetadata::new(CheckpointSource::Loop, step);
    saver.put(parent, cp, metadata, new_versions).await
}

/// The `log` channel of the latest checkpoint of `config`, decoded.
pub async fn latest_log(saver: &SqliteCheckpointer, config: &CheckpointConfig) -> Vec<String> {
    let tuple = saver.get_tuple(config).await.expect("get_tuple").expect("a checkpoint");
    tuple.checkpoint.channel_values["log"].decode().expect("a list of strings")
}

/// The Python interpreter of `LANGGRAPH_PYTHON`, or `None` after saying why; under `CI` a missing
/// one fails the test.
pub fn python_peer() -> Option<String> {
    let python = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty());
    if python.is_none() {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        assert!(!ci, "LANGGRAPH_PYTHON is required when CI is set (scripts/python-peer.sh makes one)");
        eprintln!("SKIPPED: LANGGRAPH_PYTHON is not set (scripts/python-peer.sh makes one)");
    }
    python
}

/// Runs `tests/python/{script}` on the database at `path` with `args`, and returns the JSON its
/// last line printed.
pub fn run_python(python: &str, script: &str, path: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let script = format!("{}/tests/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let out =
        std::process::Command::new(python).arg(script).arg(path).args(args).output().expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python {args:?} failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("python printed JSON")
}
