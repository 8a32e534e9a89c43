//! One file, two implementations: LangGraph's Python `SqliteSaver` (`tests/python/interop.py`)
//! and this crate each set up, write and read what the other did.
//!
//! Needs `LANGGRAPH_PYTHON` naming a Python interpreter with `langgraph-checkpoint-sqlite` and
//! `langgraph` (`scripts/python-peer.sh` makes one). Without it each test prints `SKIPPED` and
//! passes, unless `CI` is set: then it fails.

mod support;

use std::path::Path;

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version, now_iso};
use mnemograph_checkpoint::checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer, ListOptions,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_sqlite::SqliteCheckpointer;
use serde_json::{json, Value};
use support::{fresh_path, fresh_saver, python_peer, run_python};

/// Runs the Python side on `path` and returns the JSON it printed.
fn py(python: &str, path: &Path, args: &[&str]) -> Value {
    run_python(python, "interop.py", path, args)
}

#[tokio::test]
async fn each_opens_the_database_the_other_created() {
    let Some(python) = python_peer() else { return };
    // Rust first: Python's setup finds nothing to change, and sees the columns it would make.
    let (ours, saver) = fresh_saver("ours-first").await;
    drop(saver);
    let after_ours = py(&python, &ours, &["setup"]);
    // Python first: our setup accepts its tables as they are.
    let theirs = fresh_path("python-first");
    let created_by_python = py(&python, &theirs, &["setup"]);
    SqliteCheckpointer::connect(theirs.to_str().unwrap()).await.expect("open Python's database");
    assert_eq!(py(&python, &theirs, &["columns"]), created_by_python, "our setup changed nothing");
    assert_eq!(after_ours, created_by_python, "the same columns, types, defaults and keys");
}

#[tokio::test]
async fn rust_continues_an_interrupted_python_thread() {
    let Some(python) = python_peer() else { return };
    let path = fresh_path("from-python");
    py(&python, &path, &["run", "from-python"]);
    let saver = SqliteCheckpointer::connect(path.to_str().unwrap()).await.unwrap();
    let thread = CheckpointConfig::thread("from-python");
    let latest = saver.get_tuple(&thread).await.unwrap().expect("Python's checkpoint");
    assert_eq!(latest.checkpoint.channel_values["log"].decode::<Vec<String>>().unwrap(), ["py-input"]);
    // Paused at the interrupt: the pending write holds the question.
    let interrupt =
        latest.pending_writes.iter().find(|w| w.channel == "__interrupt__").expect("an interrupt");
    assert!(interrupt.value.to_json().unwrap().to_string().contains("name?"), "{:?}", interrupt.value);
    let history = saver.list(Some(&thread), ListOptions::new()).await.unwrap();
    let steps: Vec<(CheckpointSource, i64)> =
        history.iter().map(|t| (t.metadata.source, t.metadata.step)).collect();
    assert_eq!(steps, [(CheckpointSource::Loop, 0), (CheckpointSource::Input, -1)]);
    // A filter of ours matches Python's metadata text.
    let filter = json!({"source": "input", "step": -1}).as_object().unwrap().clone();
    assert_eq!(saver.list(Some(&thread), ListOptions::new().filter(filter)).await.unwrap().len(), 1);

    // Continue it: a new checkpoint on Python's, its values carried over, that Python reads.
    let mut cp = latest.checkpoint.clone();
    cp.id = checkpoint_id(1);
    cp.ts = now_iso();
    let version: std::sync::Arc<str> = next_version(cp.channel_versions.get("log").map(|v| &**v)).into();
    cp.channel_values.insert("log".into(), ChannelValue::new(vec!["py-input", "rs-node"]));
    cp.channel_versions.insert("log".into(), version.clone());
    // Left out, as the contract allows for an unchanged channel: the saver carries Python's value.
    cp.channel_values.remove("count");
    let mut new_versions = mnemograph_checkpoint::checkpoint::ChannelVersions::default();
    new_versions.insert("log".into(), version);
    let saved = saver
        .put(&latest.config, cp, CheckpointMetadata::new(CheckpointSource::Loop, 1), new_versions)
        .await
        .unwrap();
    let read = py(&python, &path, &["read", "from-python"]);
    assert_eq!(read["values"]["log"], json!(["py-input", "rs-node"]));
    assert_eq!(read["values"]["count"], json!(0), "the unchanged channel is carried over");
    assert_eq!(read["history"], json!([["loop", 1], ["loop", 0], ["input", -1]]));
    assert_eq!(saver.get_tuple(&thread).await.unwrap().unwrap().config, saved);
}

#[tokio::test]
async fn python_reads_and_filters_what_rust_wrote() {
    let Some(python) = python_peer() else { return };
    let (path, saver) = fresh_saver("from-rust").await;
    let mut cp = Checkpoint { v: 4, id: checkpoint_id(0), ts: now_iso(), ..Default::default() };
    for (channel, value) in
        [("log", ChannelValue::new(vec!["rs-a", "rs-b"])), ("count", ChannelValue::new(5_i64))]
    {
        cp.channel_values.insert(channel.into(), value);
        cp.channel_versions.insert(channel.into(), next_version(None).into());
    }
    let new_versions = cp.channel_versions.clone();
    let mut meta = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    meta.extra.insert("user".into(), json!("张三"));
    let saved = saver.put(&CheckpointConfig::thread("from-rust"), cp, meta, new_versions).await.unwrap();
    saver.put_writes(&saved, vec![("log".into(), ChannelValue::new(vec!["w"]))], "task-1", "").await.unwrap();
    let read = py(&python, &path, &["read", "from-rust"]);
    assert_eq!(read["values"], json!({"log": ["rs-a", "rs-b"], "count": 5}));
    assert_eq!(read["metadata"], json!({"source": "loop", "step": 0, "parents": {}, "user": "张三"}));
    assert_eq!(read["writes"], json!([["task-1", "log", ["w"]]]));
    assert_eq!(read["history"], json!([["loop", 0]]));
    // Python's metadata filter (json_extract over the text) finds the row Rust wrote.
    assert_eq!(read["filtered"], json!(["from-rust"]));
}
