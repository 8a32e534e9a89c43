//! One database, two implementations: LangGraph's Python MySQL saver (`tests/python/interop.py`)
//! and this crate each migrate, write and read what the other did, and a thread this crate
//! copied.
//!
//! Needs `LANGGRAPH_PYTHON` naming a Python interpreter with `langgraph-checkpoint-mysql[pymysql]`
//! and `langgraph` installed (`scripts/python-peer.sh` makes one). Without it each test prints
//! `SKIPPED` and passes, unless `CI` is set: then it fails. The databases use the server's default
//! collation: LangGraph's `SELECT` fails with "illegal mix of collations" on any other (this
//! crate's does not).

mod support;

use std::process::Command;

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version};
use mnemograph_checkpoint::checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer, ListOptions,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_mysql::MySqlShallowCheckpointer;
use serde_json::{json, Value};

/// The server URL with database `db`, in the plain form pymysql accepts.
fn python_url(db: &str) -> String {
    let url = support::url();
    let base = url.split('?').next().unwrap_or(&url);
    let server = base.rsplit_once('/').map_or(base, |(server, _)| server);
    format!("{server}/{db}")
}

/// Runs the Python side (its full saver) and returns the JSON it printed.
fn py(python: &str, db: &str, args: &[&str]) -> Value {
    py_with(python, &[], db, args)
}

/// Runs the Python side with `flags` (e.g. `--shallow`) before the URL.
fn py_with(python: &str, flags: &[&str], db: &str, args: &[&str]) -> Value {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/interop.py");
    let out = Command::new(python)
        .arg(script)
        .args(flags)
        .arg(python_url(db))
        .args(args)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python {args:?} failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).expect("python printed JSON")
}

#[tokio::test]
async fn each_setup_is_a_no_op_after_the_other() {
    let Some(python) = support::python_peer("each_setup_is_a_no_op_after_the_other") else { return };
    let Some((ours_first, saver)) = support::fresh_default_database("py_ours_first").await else { return };
    assert_eq!(saver.setup().await.unwrap(), 22);
    let versions: Vec<i64> = (0..22).collect();
    assert_eq!(py(&python, &ours_first, &["setup"])["versions"], json!(versions));

    let Some((python_first, saver)) = support::fresh_default_database("py_python_first").await else {
        return;
    };
    assert_eq!(py(&python, &python_first, &["setup"])["versions"], json!(versions));
    assert_eq!(saver.setup().await.unwrap(), 0, "Python's schema is already current for us");
    support::drop_database(&ours_first).await;
    support::drop_database(&python_first).await;
}

#[tokio::test]
async fn each_reads_what_the_other_wrote() {
    let Some(python) = support::python_peer("each_reads_what_the_other_wrote") else { return };
    let Some((db, saver)) = support::fresh_default_database("py_rw").await else { return };
    saver.setup().await.unwrap();

    // Python writes, Rust reads.
    py(&python, &db, &["run", "from-python"]);
    let latest = saver.get_tuple(&CheckpointConfig::thread("from-python")).await.unwrap().unwrap();
    let values = &latest.checkpoint.channel_values;
    assert_eq!(values["log"].decode::<Vec<String>>().unwrap(), ["py-input", "py-node"]);
    assert_eq!(values["count"].decode::<i64>().unwrap(), 1);
    let history =
        saver.list(Some(&CheckpointConfig::thread("from-python")), ListOptions::new()).await.unwrap();
    let steps: Vec<(CheckpointSource, i64)> =
        history.iter().map(|t| (t.metadata.source, t.metadata.step)).collect();
    use CheckpointSource::{Input, Loop};
    assert_eq!(steps, [(Loop, 1), (Loop, 0), (Input, -1)]);
    assert_eq!(latest.parent_config.as_ref(), Some(&history[1].config));

    // Rust writes, Python reads.
    let mut cp = Checkpoint {
        v: 4,
        id: checkpoint_id(0),
        ts: mnemograph_checkpoint::checkpoint::backend::now_iso(),
        ..Default::default()
    };
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
    let read = py(&python, &db, &["read", "from-rust"]);
    assert_eq!(read["values"], json!({"log": ["rs-a", "rs-b"], "count": 5}));
    assert_eq!(read["metadata"], json!({"source": "loop", "step": 0, "parents": {}, "user": "张三"}));
    assert_eq!(read["writes"], json!([["task-1", "log", ["w"]]]));
    assert_eq!(read["history"], json!([["loop", 0]]));
    // Python's metadata filter (JSON text in its own escaping) finds the row Rust wrote.
    assert_eq!(read["filtered"], json!(["from-rust"]));
    support::drop_database(&db).await;
}

#[tokio::test]
async fn shallow_savers_share_a_database() {
    let Some(python) = support::python_peer("shallow_savers_share_a_database") else { return };
    let Some((db, full)) = support::fresh_default_database("py_shallow").await else { return };
    let saver = MySqlShallowCheckpointer::from_pool(full.pool().clone());
    assert_eq!(saver.setup().await.unwrap(), 11);
    let versions: Vec<i64> = (0..11).collect();
    assert_eq!(py_with(&python, &["--shallow"], &db, &["setup"])["versions"], json!(versions));

    // Python writes (three steps, one row left), Rust reads.
    py_with(&python, &["--shallow"], &db, &["run", "from-python"]);
    let latest = saver.get_tuple(&CheckpointConfig::thread("from-python")).await.unwrap().unwrap();
    assert_eq!(
        latest.checkpoint.channel_values["log"].decode::<Vec<String>>().unwrap(),
        ["py-input", "py-node"]
    );
    assert_eq!(latest.checkpoint.channel_values["count"].decode::<i64>().unwrap(), 1);
    assert_eq!(latest.metadata.step, 1);

    // Rust writes, Python reads.
    let mut cp = Checkpoint {
        v: 4,
        id: checkpoint_id(0),
        ts: mnemograph_checkpoint::checkpoint::backend::now_iso(),
        ..Default::default()
    };
    cp.channel_values.insert("log".into(), ChannelValue::new(vec!["rs"]));
    cp.channel_versions.insert("log".into(), next_version(None).into());
    let new_versions = cp.channel_versions.clone();
    let meta = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    saver.put(&CheckpointConfig::thread("from-rust"), cp, meta, new_versions).await.unwrap();
    let read = py_with(&python, &["--shallow"], &db, &["read", "from-rust"]);
    assert_eq!(read["values"], json!({"log": ["rs"]}));
    support::drop_database(&db).await;
}

#[tokio::test]
async fn python_reads_a_copied_thread_as_its_source() {
    let Some(python) = support::python_peer("python_reads_a_copied_thread_as_its_source") else { return };
    let Some((db, saver)) = support::fresh_default_database("py_copy").await else { return };
    saver.setup().await.unwrap();
    py(&python, &db, &["run", "py-source"]);
    Checkpointer::copy_thread(&saver, "py-source", "py-copy").await.unwrap();
    let (source, copy) = (py(&python, &db, &["read", "py-source"]), py(&python, &db, &["read", "py-copy"]));
    assert_eq!(copy, source, "Python's saver sees the same state, history and parent in the copy");
    assert_eq!(copy["values"]["log"], json!(["py-input", "py-node"]));
    assert_eq!(copy["history"], json!([["loop", 1], ["loop", 0], ["input", -1]]));
    support::drop_database(&db).await;
}
