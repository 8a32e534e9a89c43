//! Delta chains through a thread's life: pruning, deleting, copying, rolling back runs, broken
//! chains, settings, and Python reading delta rows.

use super::*;

#[tokio::test]
async fn prune_keeps_every_blob_a_kept_chain_needs() {
    let Some((dbs, delta, plain)) = savers("delta_prune", 8).await else { return };
    let thread = "pruned";
    converse(Tee { delta: delta.clone(), plain: plain.clone() }, thread, &TURNS[..6]).await;
    let before = history(&delta, thread).await;
    let (blob_rows, _) = blobs(&delta, thread, None).await;

    // Keep a few: their chains reach back to snapshots of checkpoints that are removed.
    for keep in [5, 2, 1] {
        delta.prune(thread, keep).await.unwrap();
        plain.prune(thread, keep).await.unwrap();
        let after = history(&delta, thread).await;
        assert_eq!(after, before[..keep], "keep_last = {keep}: the newest, unchanged");
        assert_eq!(after, history(&plain, thread).await);
        // A saver with an empty cache reads the same (nothing comes from memory).
        let fresh = MySqlCheckpointer::from_pool(delta.pool().clone());
        assert_eq!(history(&fresh, thread).await, after);
    }
    let (kept_rows, _) = blobs(&delta, thread, None).await;
    assert!(kept_rows < blob_rows, "unneeded blobs went: {kept_rows} of {blob_rows}");
    // The kept checkpoint's chain: at most the interval's snapshot and deltas, plus the input.
    assert!(kept_rows <= 8 + 1, "{kept_rows} rows kept for one checkpoint");

    // The thread goes on from the pruned state, still in delta mode.
    converse(Tee { delta: delta.clone(), plain: plain.clone() }, thread, &["on", "and on"]).await;
    assert_eq!(history(&delta, thread).await, history(&plain, thread).await);

    delta.prune(thread, 0).await.unwrap();
    assert_eq!(blobs(&delta, thread, None).await.0, 0, "keep none: no blob left");
    drop_all(dbs).await;
}

#[tokio::test]
async fn delete_thread_removes_everything_and_the_next_value_is_a_snapshot() {
    let Some((dbs, delta, _plain)) = savers("delta_delete", 32).await else { return };
    let thread = CheckpointConfig::thread("deleted");
    let (at, v1) = put_messages(&delta, &thread, 0, None, ChannelValue::new(chat(3))).await;
    let (at, v2) = put_messages(&delta, &at, 1, Some(&v1), ChannelValue::new(chat(4))).await;
    delta.put_writes(&at, vec![("messages".into(), ChannelValue::new(chat(1)))], "task", "").await.unwrap();
    assert_eq!(blobs(&delta, "deleted", Some("delta-msgpack")).await.0, 1);

    delta.delete_thread("deleted").await.unwrap();
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        assert_eq!(rows(&delta, table, "deleted").await, 0, "{table}");
    }
    // The cache forgot the thread: a value extending the deleted one is stored whole.
    let (at, _) = put_messages(&delta, &thread, 2, Some(&v2), ChannelValue::new(chat(5))).await;
    assert_eq!(blobs(&delta, "deleted", Some("delta-msgpack")).await.0, 0);
    let read: Vec<Message> =
        delta.get_tuple(&at).await.unwrap().unwrap().checkpoint.channel_values["messages"].decode().unwrap();
    assert_eq!(read, chat(5));
    drop_all(dbs).await;
}

#[tokio::test]
async fn a_base_deleted_by_another_process_gives_a_snapshot_not_a_dangling_delta() {
    let Some((dbs, delta, _plain)) = savers("delta_stale", 32).await else { return };
    let thread = CheckpointConfig::thread("stale");
    let (at, v1) = put_messages(&delta, &thread, 0, None, ChannelValue::new(chat(2))).await;
    // Another saver (its own cache) deletes the thread; ours still has the value cached.
    let other = MySqlCheckpointer::from_pool(delta.pool().clone()).with_delta_channels(["messages"]);
    other.delete_thread("stale").await.unwrap();
    let (at, v2) = put_messages(&delta, &at, 1, Some(&v1), ChannelValue::new(chat(3))).await;
    assert_eq!(blobs(&delta, "stale", Some("delta-msgpack")).await.0, 0, "no delta on a missing base");
    // The snapshot is cached in turn: the next value is a delta on it, and reads back.
    let (at, _) = put_messages(&delta, &at, 2, Some(&v2), ChannelValue::new(chat(4))).await;
    assert_eq!(blobs(&delta, "stale", Some("delta-msgpack")).await.0, 1);
    let read: Vec<Message> =
        delta.get_tuple(&at).await.unwrap().unwrap().checkpoint.channel_values["messages"].decode().unwrap();
    assert_eq!(read, chat(4));
    drop_all(dbs).await;
}

#[tokio::test]
async fn broken_chains_are_corrupt_errors_naming_thread_checkpoint_and_channel() {
    let Some((dbs, delta, _plain)) = savers("delta_corrupt", 32).await else { return };
    let thread = CheckpointConfig::thread("broken");
    let (mut at, mut version) = put_messages(&delta, &thread, 0, None, ChannelValue::new(chat(2))).await;
    let root = version.clone();
    for step in 1..4 {
        (at, version) =
            put_messages(&delta, &at, step, Some(&version), ChannelValue::new(chat(2 + step as usize))).await;
    }
    let id = at.checkpoint_id.clone().unwrap();
    // The damage is read as another process would: the writer answers from what it remembers
    // while the checkpoint rows are unchanged (`with_read_cache`).
    let reader = MySqlCheckpointer::from_pool(delta.pool().clone()).with_delta_channels(["messages"]);
    let expect_corrupt = |result: Result<Option<CheckpointTuple>, CheckpointError>, what: &str| match result {
        Err(CheckpointError::Corrupt(message)) => {
            for part in ["broken", id.as_str(), "`messages`", what] {
                assert!(message.contains(part), "{message:?} lacks {part:?}");
            }
        }
        other => panic!("expected Corrupt, got {other:?}"),
    };
    let set_blob = |version: String, blob: Vec<u8>| {
        let pool = delta.pool().clone();
        async move {
            sqlx::query("UPDATE checkpoint_blobs SET `blob` = ? WHERE thread_id = 'broken' AND version = ?")
                .bind(blob)
                .bind(version)
                .execute(&pool)
                .await
                .unwrap();
        }
    };

    // The tip's own bytes are garbage.
    let good: Vec<u8> =
        sqlx::query_scalar("SELECT `blob` FROM checkpoint_blobs WHERE thread_id = 'broken' AND version = ?")
            .bind(&version)
            .fetch_one(delta.pool())
            .await
            .unwrap();
    set_blob(version.clone(), b"\x95\x07garbage".to_vec()).await;
    expect_corrupt(reader.get_tuple(&at).await, "delta blob");
    let listed = reader.list(Some(&thread), ListOptions::new()).await;
    assert!(matches!(listed, Err(CheckpointError::Corrupt(_))), "{listed:?}");

    set_blob(version.clone(), good).await;
    assert!(reader.get_tuple(&at).await.is_ok(), "repaired");

    // The snapshot at the root of the chain is gone.
    let tip = CheckpointConfig { checkpoint_id: None, ..thread.clone() };
    sqlx::query("DELETE FROM checkpoint_blobs WHERE thread_id = 'broken' AND version = ?")
        .bind(&root)
        .execute(delta.pool())
        .await
        .unwrap();
    let latest = reader.get_tuple(&tip).await;
    let Err(CheckpointError::Corrupt(message)) = &latest else { panic!("{latest:?}") };
    assert!(
        message.contains("missing") && message.contains(&root) && message.contains("`messages`"),
        "{message}"
    );

    // A snapshot that is not a list.
    let (at, _) = {
        let fresh = CheckpointConfig::thread("broken-kind");
        let (at, v1) = put_messages(&delta, &fresh, 0, None, ChannelValue::new(chat(2))).await;
        let next = put_messages(&delta, &at, 1, Some(&v1), ChannelValue::new(chat(3))).await;
        sqlx::query("UPDATE checkpoint_blobs SET type = 'null', `blob` = '' WHERE thread_id = 'broken-kind' AND version = ?")
            .bind(&v1)
            .execute(delta.pool())
            .await
            .unwrap();
        next
    };
    let result = reader.get_tuple(&at).await;
    assert!(matches!(&result, Err(CheckpointError::Corrupt(m)) if m.contains("not a list")), "{result:?}");
    drop_all(dbs).await;
}

#[tokio::test]
async fn non_lists_namespaces_and_url_settings() {
    let Some((dbs, delta, _plain)) = savers("delta_misc", 32).await else { return };
    // Settings from the URL.
    let url = support::url();
    let server =
        url.split('?').next().unwrap_or(&url).rsplit_once('/').map_or(url.as_str(), |(s, _)| s).to_owned();
    let from_url = MySqlCheckpointer::connect(&format!(
        "{server}/{}?delta-channels=messages,log&delta-snapshot-every=3",
        dbs[0]
    ))
    .await
    .unwrap();
    let settings = from_url.delta().expect("delta mode from the URL");
    assert_eq!(
        (settings.channels().collect::<Vec<_>>(), settings.snapshot_interval()),
        (vec!["log", "messages"], 3)
    );
    assert!(MySqlCheckpointer::connect(&format!(
        "{server}/{}?delta-channels=m&delta-snapshot-every=x",
        dbs[0]
    ))
    .await
    .is_err());
    assert!(MySqlCheckpointer::from_pool(delta.pool().clone()).delta().is_none(), "off by default");

    // A value of a delta channel that is not a list is stored as a plain saver stores it.
    let thread = CheckpointConfig::thread("misc");
    let map = ChannelValue::new(std::collections::BTreeMap::from([("a".to_owned(), 1)]));
    let (at, v1) = put_messages(&from_url, &thread, 0, None, map).await;
    let (at, v2) = put_messages(&from_url, &at, 1, Some(&v1), ChannelValue::new(chat(2))).await;
    let (at, _) = put_messages(&from_url, &at, 2, Some(&v2), ChannelValue::new(chat(3))).await;
    assert_eq!(blobs(&from_url, "misc", Some("delta-msgpack")).await.0, 1);
    let history = from_url.list(Some(&thread), ListOptions::new()).await.unwrap();
    assert_eq!(history[0].config, at);
    assert_eq!(
        history[2].checkpoint.channel_values["messages"].to_json().unwrap(),
        serde_json::json!({"a": 1})
    );

    // Chains are per namespace: a subgraph's list grows on its own.
    let child = thread.clone().with_ns("child:1");
    let (mut at, mut version) = put_messages(&from_url, &child, 0, None, ChannelValue::new(chat(1))).await;
    for step in 1..6 {
        (at, version) =
            put_messages(&from_url, &at, step, Some(&version), ChannelValue::new(chat(1 + step as usize)))
                .await;
    }
    let listed = from_url.list(Some(&child), ListOptions::new()).await.unwrap();
    let lengths: Vec<usize> = listed
        .iter()
        .map(|t| t.checkpoint.channel_values["messages"].decode::<Vec<Message>>().unwrap().len())
        .collect();
    assert_eq!(lengths, [6, 5, 4, 3, 2, 1]);
    assert_eq!(listed[0].config, at);
    drop_all(dbs).await;
}

#[tokio::test]
async fn python_refuses_delta_rows_instead_of_misreading_them() {
    let Some(python) = support::python_peer("python_refuses_delta_rows_instead_of_misreading_them") else {
        return;
    };
    // LangGraph's SELECT needs the server's default collation.
    let Some((db, saver)) = support::fresh_default_database("delta_py").await else { return };
    saver.setup().await.unwrap();
    let saver = saver.with_delta_channels(["messages"]);
    let thread = CheckpointConfig::thread("from-rust");
    // Strings, which the Python script can print as JSON.
    let lines = |n: usize| (0..n).map(|i| format!("line {i} {}", "y".repeat(100))).collect::<Vec<_>>();
    let (at, v1) = put_messages(&saver, &thread, 0, None, ChannelValue::new(lines(3))).await;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/interop.py");
    let url = support::url();
    let base = url.split('?').next().unwrap_or(&url);
    let py_url = format!("{}/{db}", base.rsplit_once('/').map_or(base, |(s, _)| s));
    let read =
        || Command::new(&python).arg(script).arg(&py_url).args(["read", "from-rust"]).output().unwrap();

    // At a snapshot version Python reads the thread.
    let out = read();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(printed["values"]["messages"], serde_json::json!(lines(3)));
    // At a delta version it fails loudly.
    put_messages(&saver, &at, 1, Some(&v1), ChannelValue::new(lines(4))).await;
    assert_eq!(blobs(&saver, "from-rust", Some("delta-msgpack")).await.0, 1);
    let out = read();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "Python must not return a value for a delta row");
    assert!(stderr.contains("Unknown serialization type: delta-msgpack"), "{stderr}");
    support::drop_database(&db).await;
}

/// Reads of the kept latest checkpoint after LangGraph's `keep_latest` prune: every blob its delta
/// chain is built on stays, and the thread goes on from it.
#[tokio::test]
async fn keep_latest_prune_leaves_the_latest_delta_chain_readable() {
    let Some((dbs, delta, plain)) = savers("delta_keep_latest", 8).await else { return };
    let thread = "kept";
    converse(Tee { delta: delta.clone(), plain: plain.clone() }, thread, &TURNS[..6]).await;
    let before = history(&delta, thread).await;
    let threads = [thread.to_owned()];
    Checkpointer::prune(&delta, &threads, PruneStrategy::KeepLatest).await.unwrap();
    Checkpointer::prune(&plain, &threads, PruneStrategy::KeepLatest).await.unwrap();
    let after = history(&delta, thread).await;
    assert_eq!(after, before[..1], "the latest, unchanged");
    assert_eq!(after, history(&plain, thread).await);
    let fresh = MySqlCheckpointer::from_pool(delta.pool().clone());
    assert_eq!(history(&fresh, thread).await, after, "read without any cache");
    assert!(blobs(&delta, thread, Some("delta-msgpack")).await.0 > 0, "the kept value is a delta chain");

    converse(Tee { delta: delta.clone(), plain: plain.clone() }, thread, &["on", "and on"]).await;
    assert_eq!(history(&delta, thread).await, history(&plain, thread).await);
    drop_all(dbs).await;
}

/// A copied thread reads as its source, delta chains included, and goes on as the plain copy.
#[tokio::test]
async fn a_copied_delta_thread_reads_and_goes_on_as_its_source() {
    let Some((dbs, delta, plain)) = savers("delta_copy", 8).await else { return };
    converse(Tee { delta: delta.clone(), plain: plain.clone() }, "source", &TURNS[..6]).await;
    Checkpointer::copy_thread(&delta, "source", "copy").await.unwrap();
    Checkpointer::copy_thread(&plain, "source", "copy").await.unwrap();
    let fresh = MySqlCheckpointer::from_pool(delta.pool().clone());
    let source: Vec<String> = history(&fresh, "source")
        .await
        .into_iter()
        .map(|t| t.replace(r#"thread_id: "source""#, r#"thread_id: "copy""#))
        .collect();
    assert_eq!(history(&fresh, "copy").await, source);
    assert_eq!(history(&delta, "copy").await, history(&plain, "copy").await);

    converse(Tee { delta: delta.clone(), plain: plain.clone() }, "copy", &["on", "and on"]).await;
    assert_eq!(history(&delta, "copy").await, history(&plain, "copy").await);
    drop_all(dbs).await;
}

/// Deleting the run that wrote a chain's snapshot keeps the snapshot while a later run's deltas
/// are built on it.
#[tokio::test]
async fn delete_for_runs_keeps_the_blobs_later_runs_deltas_need() {
    let Some((dbs, delta, plain)) = savers("delta_runs", 8).await else { return };
    let thread = CheckpointConfig::thread("runs");
    let mut steps = Vec::new();
    let mut version: Option<String> = None;
    for step in 0..8_i64 {
        let mut cp = Checkpoint { v: 4, id: checkpoint_id(step), ..Checkpoint::default() };
        let next = next_version(version.as_deref());
        cp.channel_values.insert("messages".into(), ChannelValue::new(chat(step as usize + 1)));
        cp.channel_versions.insert("messages".into(), next.as_str().into());
        let mut meta = CheckpointMetadata::new(CheckpointSource::Loop, step);
        meta.extra.insert("run_id".into(), serde_json::json!(if step < 4 { "first" } else { "second" }));
        steps.push((cp, meta));
        version = Some(next);
    }
    for saver in [&delta, &plain] {
        let mut at = thread.clone();
        for (cp, meta) in &steps {
            let new_versions = cp.channel_versions.clone();
            at = saver.put(&at, cp.clone(), meta.clone(), new_versions).await.unwrap();
        }
    }
    assert!(blobs(&delta, "runs", Some("delta-msgpack")).await.0 >= 7, "one snapshot, then deltas");
    for saver in [&delta, &plain] {
        saver.delete_for_runs(&["first".to_owned()]).await.unwrap();
    }
    let fresh = MySqlCheckpointer::from_pool(delta.pool().clone());
    let kept = history(&fresh, "runs").await;
    assert_eq!(kept.len(), 4);
    assert_eq!(kept, history(&plain, "runs").await);
    let latest = fresh.get_tuple(&thread).await.unwrap().unwrap();
    let messages: Vec<Message> = latest.checkpoint.channel_values["messages"].decode().unwrap();
    assert_eq!(messages, chat(8));
    drop_all(dbs).await;
}
