//! Behaviour specific to the MySQL saver: column limits, pruning, errors, batching, and the cost
//! of one `put`.

mod support;

use std::time::Instant;

use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource, Checkpointer,
    ListOptions,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_mysql::{Error, MySqlCheckpointer};

async fn put(
    saver: &MySqlCheckpointer,
    at: &CheckpointConfig,
    step: i64,
    values: &[(&str, ChannelValue)],
) -> CheckpointConfig {
    let (cp, new_versions) = support::checkpoint(step, values);
    let meta = CheckpointMetadata::new(CheckpointSource::Loop, step);
    saver.put(at, cp, meta, new_versions).await.unwrap()
}

async fn count(saver: &MySqlCheckpointer, table: &str, thread_id: &str) -> i64 {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE thread_id = ?"))
        .bind(thread_id)
        .fetch_one(saver.pool())
        .await
        .unwrap()
}

fn list(n: usize) -> ChannelValue {
    ChannelValue::new(vec!["x".repeat(n)])
}

#[tokio::test]
async fn overlong_values_are_invalid_and_nothing_is_written() {
    let Some(saver) = support::saver().await else { return };
    let long = "长".repeat(151);
    let meta = || CheckpointMetadata::new(CheckpointSource::Loop, 0);

    let err = saver
        .put(&CheckpointConfig::thread(&long), support::checkpoint(0, &[]).0, meta(), ChannelVersions::new())
        .await;
    assert!(matches!(&err, Err(CheckpointError::Invalid(m)) if m.contains("`thread_id`")), "{err:?}");

    let thread = support::unique("overlong");
    let config = CheckpointConfig::thread(&thread);
    let (cp, versions) = support::checkpoint(0, &[(&long, list(1))]);
    let err = saver.put(&config, cp, meta(), versions).await;
    assert!(matches!(&err, Err(CheckpointError::Invalid(m)) if m.contains("`channel`")), "{err:?}");
    assert_eq!(count(&saver, "checkpoint_blobs", &thread).await, 0, "no blob before the refusal");

    let saved = put(&saver, &config, 0, &[("a", list(1))]).await;
    let err = saver.put_writes(&saved, vec![("a".into(), list(1))], &long, "").await;
    assert!(matches!(&err, Err(CheckpointError::Invalid(m)) if m.contains("`task_id`")), "{err:?}");
    let err = saver.put_writes(&saved.clone().with_ns("x".repeat(2001)), vec![], "t", "").await;
    assert!(matches!(&err, Err(CheckpointError::Invalid(m)) if m.contains("`checkpoint_ns`")), "{err:?}");
    // 150 characters of three bytes each fit exactly.
    let at_limit = CheckpointConfig::thread("长".repeat(150));
    let saved = put(&saver, &at_limit, 0, &[("a", list(1))]).await;
    assert_eq!(saver.get_tuple(&saved).await.unwrap().unwrap().config.thread_id, at_limit.thread_id);
    saver.delete_thread(&at_limit.thread_id).await.unwrap();
}

#[tokio::test]
async fn prune_keeps_the_newest_per_namespace_and_drops_orphans() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("prune");
    let root = CheckpointConfig::thread(&thread);
    let mut last = root.clone();
    for step in 0..5 {
        last = put(&saver, &last, step, &[("a", list(step as usize))]).await;
        saver.put_writes(&last, vec![("a".into(), list(1))], "task", "").await.unwrap();
    }
    // The newest root checkpoint changes `b` only: `a`'s blob at step 4 stays referenced.
    let (mut cp, _) = support::checkpoint(5, &[("b", list(9))]);
    let kept_a = saver.get_tuple(&last).await.unwrap().unwrap().checkpoint;
    cp.channel_versions.insert("a".into(), kept_a.channel_versions["a"].clone());
    let new_versions = [("b".into(), cp.channel_versions["b"].clone())].into();
    last =
        saver.put(&last, cp, CheckpointMetadata::new(CheckpointSource::Loop, 5), new_versions).await.unwrap();
    put(&saver, &root.clone().with_ns("child:1"), 0, &[("c", list(1))]).await;
    assert_eq!(
        (count(&saver, "checkpoints", &thread).await, count(&saver, "checkpoint_blobs", &thread).await),
        (7, 7)
    );

    assert_eq!(saver.prune(&thread, 2).await.unwrap(), 4);
    assert_eq!(count(&saver, "checkpoints", &thread).await, 3);
    // Root keeps a@4 and b@5; the child keeps c.
    assert_eq!(count(&saver, "checkpoint_blobs", &thread).await, 3);
    assert_eq!(count(&saver, "checkpoint_writes", &thread).await, 1, "only the kept checkpoint's write");
    let listed = saver.list(Some(&root), ListOptions::new()).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].config, last);
    assert_eq!(listed[0].checkpoint.channel_values["a"].decode::<Vec<String>>().unwrap(), ["xxxx"]);
    assert_eq!(listed[1].pending_writes.len(), 1);

    assert_eq!(saver.prune(&thread, 0).await.unwrap(), 3);
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        assert_eq!(count(&saver, table, &thread).await, 0, "{table}");
    }
    assert_eq!(saver.prune("no-such-thread", 1).await.unwrap(), 0);
}

#[tokio::test]
async fn backend_errors_downcast_to_the_crate_error() {
    let Some((db, saver)) = support::fresh_database("nosetup").await else { return };
    // No `setup`: the tables do not exist.
    let err = saver.get_tuple(&CheckpointConfig::thread("t")).await.unwrap_err();
    let CheckpointError::Backend(source) = &err else { panic!("{err:?}") };
    let Some(Error::Sqlx(sqlx::Error::Database(db_err))) = source.downcast_ref::<Error>() else {
        panic!("{source:?}")
    };
    assert!(db_err.message().contains("checkpoints"), "{db_err}");
    support::drop_database(&db).await;
}

#[tokio::test]
async fn thousands_of_writes_in_one_call() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("many-writes");
    let saved = put(&saver, &CheckpointConfig::thread(&thread), 0, &[("a", list(1))]).await;
    // More rows than one statement's 65,535 placeholders allow (10 per row).
    let writes: Vec<(String, ChannelValue)> =
        (0..7_000).map(|i| ("a".to_owned(), ChannelValue::new(i))).collect();
    saver.put_writes(&saved, writes, "task", "").await.unwrap();
    let tuple = saver.get_tuple(&saved).await.unwrap().unwrap();
    assert_eq!(tuple.pending_writes.len(), 7_000);
    let values: Vec<i64> = tuple.pending_writes.iter().map(|w| w.value.decode().unwrap()).collect();
    assert!(values.iter().copied().eq(0..7_000), "sorted by idx");
    saver.delete_thread(&thread).await.unwrap();
}

/// Not a benchmark, a sanity bound and a number in the output (`--release -- --nocapture`): 200
/// `put`s of a step that changes a 20-message list and a counter, each with its parent, as a graph
/// saves them, then 200 reads of the latest checkpoint.
#[tokio::test]
async fn put_latency() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("latency");
    let messages: Vec<String> =
        (0..20).map(|i| format!("message {i}: {}", "lorem ipsum ".repeat(10))).collect();
    let mut at = CheckpointConfig::thread(&thread);
    // `PUT_N=800` shows that reading the latest checkpoint does not slow down as a thread grows.
    let n: i64 = std::env::var("PUT_N").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let start = Instant::now();
    for step in 0..n {
        at = put(
            &saver,
            &at,
            step,
            &[("messages", ChannelValue::new(messages.clone())), ("count", ChannelValue::new(step))],
        )
        .await;
    }
    let per_put = start.elapsed() / n as u32;
    let start = Instant::now();
    for _ in 0..n {
        saver.get_tuple(&CheckpointConfig::thread(&thread)).await.unwrap().unwrap();
    }
    let per_get = start.elapsed() / n as u32;
    eprintln!("MySQL put: {per_put:?} per checkpoint (blob + upsert, one transaction); get_tuple (latest of {n}): {per_get:?}");
    assert!(per_put.as_millis() < 500, "{per_put:?}");
    saver.delete_thread(&thread).await.unwrap();
}
