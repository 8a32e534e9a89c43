//! `MySqlShallowCheckpointer`: LangGraph's shallow tables, the latest checkpoint only. Each test
//! uses a fresh database (the shallow tables share the full saver's names).

mod support;

use mnemograph_checkpoint::checkpoint::backend::checkpoint_id;
use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource,
    CheckpointTuple, Checkpointer, ListOptions, PruneStrategy,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_mysql::{Error, MySqlCheckpointer, MySqlShallowCheckpointer};
use mnemograph_core::prelude::*;

/// A fresh database with the shallow tables.
async fn shallow(label: &str) -> Option<(String, MySqlShallowCheckpointer)> {
    let (db, full) = support::fresh_database(label).await?;
    let saver = MySqlShallowCheckpointer::from_pool(full.pool().clone());
    assert_eq!(saver.setup().await.unwrap(), 11);
    Some((db, saver))
}

fn version(n: u64) -> std::sync::Arc<str> {
    format!("{n:032}.0.{n}").into()
}

/// A checkpoint at `step` with `set` channels at new versions and `keep` channels at old ones.
fn checkpoint(
    step: i64,
    set: &[(&str, u64, ChannelValue)],
    keep: &[(&str, u64)],
) -> (Checkpoint, ChannelVersions) {
    let mut cp = Checkpoint {
        v: 4,
        id: checkpoint_id(step),
        ts: "2026-01-01T00:00:00+00:00".into(),
        ..Default::default()
    };
    let mut new_versions = ChannelVersions::new();
    for (channel, n, value) in set {
        cp.channel_values.insert((*channel).into(), value.clone());
        cp.channel_versions.insert((*channel).into(), version(*n));
        new_versions.insert((*channel).into(), version(*n));
    }
    for (channel, n) in keep {
        cp.channel_versions.insert((*channel).into(), version(*n));
    }
    (cp, new_versions)
}

async fn put(
    saver: &MySqlShallowCheckpointer,
    at: &CheckpointConfig,
    (cp, new_versions): (Checkpoint, ChannelVersions),
) -> CheckpointConfig {
    let meta = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    saver.put(at, cp, meta, new_versions).await.unwrap()
}

async fn count(saver: &MySqlShallowCheckpointer, table: &str) -> i64 {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(saver.pool()).await.unwrap()
}

fn text(s: &str) -> ChannelValue {
    ChannelValue::new(vec![s.to_owned()])
}

#[tokio::test]
async fn keeps_only_the_latest_checkpoint() {
    let Some((db, saver)) = shallow("sh_latest").await else { return };
    let thread = CheckpointConfig::thread("t");
    let c1 =
        put(&saver, &thread, checkpoint(0, &[("a", 1, text("a1")), ("n", 1, ChannelValue::new(7_i64))], &[]))
            .await;
    let c2 = put(&saver, &c1, checkpoint(1, &[("a", 2, text("a2"))], &[("n", 1)])).await;

    let latest = saver.get_tuple(&thread).await.unwrap().unwrap();
    assert_eq!(latest.config, c2);
    assert_eq!(latest.parent_config, None, "the shallow table keeps no parent");
    let values = &latest.checkpoint.channel_values;
    assert_eq!(values["a"].decode::<Vec<String>>().unwrap(), ["a2"]);
    assert_eq!(values["n"].decode::<i64>().unwrap(), 7, "an unchanged channel keeps its blob");
    assert_eq!(saver.get_tuple(&c2).await.unwrap().unwrap().config, c2);
    assert!(saver.get_tuple(&c1).await.unwrap().is_none(), "an overwritten checkpoint is gone");
    assert_eq!(saver.list(Some(&thread), ListOptions::new()).await.unwrap().len(), 1);
    assert_eq!((count(&saver, "checkpoints").await, count(&saver, "checkpoint_blobs").await), (1, 2));
    support::drop_database(&db).await;
}

#[tokio::test]
async fn writes_of_older_checkpoints_are_dropped() {
    let Some((db, saver)) = shallow("sh_writes").await else { return };
    let thread = CheckpointConfig::thread("t");
    let c1 = put(&saver, &thread, checkpoint(0, &[("a", 1, text("a1"))], &[])).await;
    saver.put_writes(&c1, vec![("a".into(), text("w1"))], "task", "").await.unwrap();
    let c2 = put(&saver, &c1, checkpoint(1, &[("a", 2, text("a2"))], &[])).await;
    assert_eq!(count(&saver, "checkpoint_writes").await, 1, "the parent's writes stay");
    saver
        .put_writes(&c2, vec![("a".into(), text("w2")), ("__error__".into(), text("e"))], "task", "")
        .await
        .unwrap();
    let latest = saver.get_tuple(&thread).await.unwrap().unwrap();
    let channels: Vec<&str> = latest.pending_writes.iter().map(|w| w.channel.as_str()).collect();
    assert_eq!(channels, ["__error__", "a"]);
    put(&saver, &c2, checkpoint(2, &[("a", 3, text("a3"))], &[])).await;
    assert_eq!(count(&saver, "checkpoint_writes").await, 2, "only the new parent's writes stay");
    support::drop_database(&db).await;
}

#[tokio::test]
async fn namespaces_filters_and_delete_thread() {
    let Some((db, saver)) = shallow("sh_ns").await else { return };
    let root = CheckpointConfig::thread("t");
    let child = root.clone().with_ns("child:1");
    put(&saver, &root, checkpoint(0, &[("a", 1, text("root"))], &[])).await;
    put(&saver, &child, checkpoint(0, &[("a", 1, text("child"))], &[])).await;
    put(&saver, &CheckpointConfig::thread("other"), checkpoint(0, &[("a", 1, text("other"))], &[])).await;
    let child_tuple = saver.get_tuple(&child).await.unwrap().unwrap();
    assert_eq!(child_tuple.checkpoint.channel_values["a"].decode::<Vec<String>>().unwrap(), ["child"]);
    assert_eq!(saver.list(None, ListOptions::new()).await.unwrap().len(), 3);
    let mut filter = serde_json::Map::new();
    filter.insert("source".into(), "loop".into());
    assert_eq!(saver.list(Some(&root), ListOptions::new().filter(filter)).await.unwrap().len(), 1);
    saver.delete_thread("t").await.unwrap();
    assert!(saver.get_tuple(&root).await.unwrap().is_none());
    assert!(saver.get_tuple(&child).await.unwrap().is_none());
    assert_eq!((count(&saver, "checkpoints").await, count(&saver, "checkpoint_blobs").await), (1, 1));
    support::drop_database(&db).await;
}

#[tokio::test]
async fn setup_refuses_the_other_savers_tables() {
    let Some((shallow_db, saver)) = shallow("sh_refuse").await else { return };
    let full = MySqlCheckpointer::from_pool(saver.pool().clone());
    let err = full.setup().await.unwrap_err();
    assert!(matches!(err, Error::Schema { table: "checkpoints", .. }), "{err:?}");
    let Some((full_db, full)) = support::fresh_database("full_refuse").await else { return };
    full.setup().await.unwrap();
    let err = MySqlShallowCheckpointer::from_pool(full.pool().clone()).setup().await.unwrap_err();
    assert!(matches!(err, Error::Schema { .. }), "{err:?}");
    let recorded: i64 =
        sqlx::query_scalar("SELECT MAX(v) FROM checkpoint_migrations").fetch_one(full.pool()).await.unwrap();
    assert_eq!(recorded, 21, "nothing was changed");
    support::drop_database(&shallow_db).await;
    support::drop_database(&full_db).await;
}

#[derive(State, Clone, Default, Debug)]
struct Chat {
    #[reducer(append)]
    log: Vec<String>,
    answer: String,
}

#[tokio::test]
async fn a_graph_runs_and_resumes_on_the_shallow_saver() {
    let Some((db, saver)) = shallow("sh_graph").await else { return };
    let graph = StateGraph::<Chat>::new()
        .add_node("ask", |_s: Chat, rt: Runtime| async move {
            let answer: String = rt.interrupt("name?")?;
            Ok::<_, mnemograph_core::Error>(ChatUpdate::answer(answer).with_log(vec!["ask".to_owned()]))
        })
        .add_node("after", |_s: Chat| async {
            Ok::<_, mnemograph_core::Error>(ChatUpdate::log(vec!["after".to_owned()]))
        })
        .add_edge(START, "ask")
        .add_edge("ask", "after")
        .compile_with(saver.clone())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let out = graph.invoke(ChatUpdate::log(vec!["input".to_owned()]), &cfg).await.unwrap();
    assert!(out.is_interrupted());
    let done = graph.invoke_input(Input::resume("Ada"), &cfg).await.unwrap();
    assert_eq!(done.answer, "Ada");
    assert_eq!(done.log, ["input", "ask", "after"]);
    let history = graph.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    assert_eq!(history.len(), 1, "no history in a shallow saver");
    assert_eq!(history[0].values.log, ["input", "ask", "after"]);
    assert_eq!(count(&saver, "checkpoints").await, 1);
    support::drop_database(&db).await;
}

/// LangGraph's extended capabilities on the shallow tables: a copy carries the namespace's one
/// checkpoint with its blobs and writes, a run's checkpoint goes with its blobs and writes, and
/// `keep_latest` has nothing to remove.
#[tokio::test]
async fn copies_deletes_runs_and_prunes() {
    let Some((db, saver)) = shallow("sh_extended").await else { return };
    let source = CheckpointConfig::thread("source");
    let (cp, versions) = checkpoint(0, &[("log", 1, text("a"))], &[]);
    let mut meta = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    meta.extra.insert("run_id".into(), serde_json::json!("run-1"));
    let saved = saver.put(&source, cp, meta, versions).await.unwrap();
    saver.put_writes(&saved, vec![("log".into(), text("w"))], "task", "").await.unwrap();
    put(&saver, &source.clone().with_ns("child:1"), checkpoint(0, &[("log", 1, text("c"))], &[])).await;

    saver.copy_thread("source", "copy").await.unwrap();
    for ns in ["", "child:1"] {
        let original = saver.get_tuple(&source.clone().with_ns(ns)).await.unwrap().unwrap();
        let copied = saver.get_tuple(&CheckpointConfig::thread("copy").with_ns(ns)).await.unwrap().unwrap();
        assert_eq!(copied.checkpoint.id, original.checkpoint.id);
        let log = |t: &CheckpointTuple| t.checkpoint.channel_values["log"].decode::<Vec<String>>().unwrap();
        assert_eq!(log(&copied), log(&original));
        assert_eq!(copied.pending_writes.len(), original.pending_writes.len());
    }
    let refused = saver.copy_thread("source", "copy").await.unwrap_err();
    assert!(matches!(refused, CheckpointError::Invalid(_)), "{refused}");

    let threads = ["source".to_owned(), "copy".to_owned()];
    Checkpointer::prune(&saver, &threads, PruneStrategy::KeepLatest).await.unwrap();
    assert_eq!(count(&saver, "checkpoints").await, 4, "keep_latest keeps the one checkpoint of each");

    saver.delete_for_runs(&["run-1".to_owned()]).await.unwrap();
    assert!(saver.get_tuple(&source).await.unwrap().is_none());
    assert!(saver.get_tuple(&CheckpointConfig::thread("copy")).await.unwrap().is_none());
    assert_eq!(count(&saver, "checkpoints").await, 2, "the child namespaces stay");
    assert_eq!(count(&saver, "checkpoint_writes").await, 0);
    assert_eq!(count(&saver, "checkpoint_blobs").await, 2);

    Checkpointer::prune(&saver, &threads, PruneStrategy::Delete).await.unwrap();
    assert_eq!(count(&saver, "checkpoints").await, 0);
    assert_eq!(count(&saver, "checkpoint_blobs").await, 0);
    support::drop_database(&db).await;
}
