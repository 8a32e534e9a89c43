//! Hostile and broken input against a real PostgreSQL (`DATABASE_URL`): ids and namespaces made
//! of SQL metacharacters, NUL and the escape mark, very long ids, values of many megabytes, and
//! rows corrupted behind the saver's back. Whatever happens to the thread under attack, an
//! unrelated thread (the shared suite's bystander, `mnemograph_test::conformance`) must read
//! exactly as before.
//!
//! Without a server the tests print `SKIPPED` and pass, unless `CI` is set.

mod support;

use mnemograph_checkpoint::checkpoint::{
    CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource, Checkpointer, ListOptions,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_postgres::PostgresCheckpointer;
use mnemograph_test::conformance::Bystander;
use serde_json::{json, Map, Value};

/// Saves one checkpoint of `config` holding `values`, with metadata `extra`, and one pending
/// write of `task_id` to `write_channel`; returns the saved address.
async fn save(
    saver: &PostgresCheckpointer,
    config: &CheckpointConfig,
    values: &[(&str, ChannelValue)],
    extra: Map<String, Value>,
    (task_id, write_channel): (&str, &str),
) -> CheckpointConfig {
    let (cp, versions) = support::checkpoint(0, values);
    let mut metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    metadata.extra = extra;
    let saved = saver.put(config, cp, metadata, versions).await.expect("put");
    let writes = vec![(write_channel.to_owned(), ChannelValue::new(json!({ "w": write_channel })))];
    saver.put_writes(&saved, writes, task_id, "").await.expect("put_writes");
    saved
}

/// Strings that mean something to SQL, `LIKE`, JSON paths, C, or this crate's escaping.
const HOSTILE: [&str; 10] = [
    "'; DROP TABLE checkpoints; --",
    "a\"b\\c",
    "%_*?[]{}",
    "$.channel_values.\"x\"",
    "nul\0inside",
    "\0",
    "\u{FDD0}starts with the mark",
    "\u{FDD0}\\0 mark and escape",
    "用户 🌏 é\u{301}",
    " trailing space ",
];

#[tokio::test]
async fn hostile_ids_namespaces_and_channels_round_trip_exactly() {
    let Some(saver) = support::saver().await else { return };
    let bystander = Bystander::new(&saver, "hostile").await;
    for (i, hostile) in HOSTILE.iter().enumerate() {
        let config = CheckpointConfig::thread(format!("{}{hostile}", support::unique("hostile")))
            .with_ns(format!("ns{hostile}"));
        let extra: Map<String, Value> = [(format!("key{hostile}"), json!(hostile))].into_iter().collect();
        let values = [(*hostile, ChannelValue::new(vec![*hostile])), ("text", ChannelValue::new(*hostile))];
        let saved = save(&saver, &config, &values, extra.clone(), (hostile, hostile)).await;

        let tuple =
            saver.get_tuple(&config).await.unwrap().unwrap_or_else(|| panic!("#{i} {hostile:?} lost"));
        assert_eq!(tuple.config, saved, "#{i}");
        let list: Vec<String> = tuple.checkpoint.channel_values[*hostile].decode().unwrap();
        assert_eq!(list, [*hostile], "#{i}");
        assert_eq!(tuple.checkpoint.channel_values["text"].decode::<String>().unwrap(), *hostile, "#{i}");
        assert_eq!(tuple.metadata.extra, extra, "#{i}");
        let write = &tuple.pending_writes[0];
        assert_eq!((write.task_id.as_str(), write.channel.as_str()), (*hostile, *hostile), "#{i}");

        // Filters find it by a hostile value, listing by the address finds only it.
        let listed = saver.list(Some(&config), ListOptions::new().filter(extra.clone())).await.unwrap();
        assert_eq!(listed.len(), 1, "#{i}");
        saver.delete_thread(&config.thread_id).await.unwrap();
        assert!(saver.get_tuple(&config).await.unwrap().is_none(), "#{i}");
    }
    bystander.check(&saver, "hostile ids").await;
}

#[tokio::test]
async fn texts_python_can_store_are_stored_verbatim() {
    let Some(saver) = support::saver().await else { return };
    let thread = format!("{}-用户 'x'", support::unique("verbatim"));
    let config = CheckpointConfig::thread(&thread).with_ns("sub:1");
    save(&saver, &config, &[("list", ChannelValue::new(vec!["a"]))], Map::new(), ("task", "list")).await;
    let stored: (String, String) =
        sqlx::query_as("SELECT thread_id, checkpoint_ns FROM checkpoints WHERE thread_id = $1")
            .bind(&thread)
            .fetch_one(saver.pool())
            .await
            .unwrap();
    assert_eq!(stored, (thread.clone(), "sub:1".to_owned()));
    let channel: String = sqlx::query_scalar("SELECT channel FROM checkpoint_blobs WHERE thread_id = $1")
        .bind(&thread)
        .fetch_one(saver.pool())
        .await
        .unwrap();
    assert_eq!(channel, "list");
    saver.delete_thread(&thread).await.unwrap();
}

#[tokio::test]
async fn ids_differing_only_in_case_or_spaces_are_different_threads() {
    let Some(saver) = support::saver().await else { return };
    let base = support::unique("case");
    let ids = [format!("{base}-a"), format!("{base}-A"), format!("{base}-a ")];
    for (i, id) in ids.iter().enumerate() {
        let values = [("n", ChannelValue::new(i as i64))];
        save(&saver, &CheckpointConfig::thread(id), &values, Map::new(), ("t", "n")).await;
    }
    for (i, id) in ids.iter().enumerate() {
        let tuple = saver.get_tuple(&CheckpointConfig::thread(id)).await.unwrap().unwrap();
        assert_eq!(tuple.checkpoint.channel_values["n"].decode::<i64>().unwrap(), i as i64);
        saver.delete_thread(id).await.unwrap();
    }
}

/// `n` characters that do not compress (Postgres compresses long index keys before it limits
/// their size), unique to this run.
fn incompressible(n: usize) -> String {
    let mut out = String::with_capacity(n + 40);
    while out.len() < n {
        out.push_str(&mnemograph_checkpoint::checkpoint::backend::uuid6(0));
    }
    out.truncate(n);
    out
}

#[tokio::test]
async fn long_ids_round_trip() {
    let Some(saver) = support::saver().await else { return };
    let thread = incompressible(1_000);
    let config = CheckpointConfig::thread(&thread).with_ns(incompressible(600));
    let channel = incompressible(500);
    let saved =
        save(&saver, &config, &[(&channel, ChannelValue::new(vec![1]))], Map::new(), ("t", "w")).await;
    let tuple = saver.get_tuple(&config).await.unwrap().unwrap();
    assert_eq!(tuple.config, saved);
    assert!(tuple.checkpoint.channel_values.contains_key(channel.as_str()));
    saver.delete_thread(&thread).await.unwrap();
}

/// LangGraph's primary keys are btree indexes, whose entries Postgres limits to about 2.7 kB:
/// a longer thread id is refused by the server, with nothing stored.
#[tokio::test]
async fn ids_beyond_the_index_limit_are_refused_and_nothing_is_stored() {
    let Some(saver) = support::saver().await else { return };
    let bystander = Bystander::new(&saver, "over-limit").await;
    let thread = incompressible(20_000);
    let config = CheckpointConfig::thread(&thread);
    let (cp, versions) = support::checkpoint(0, &[("log", ChannelValue::new(vec!["a"]))]);
    let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let refused = saver.put(&config, cp, metadata, versions).await;
    let CheckpointError::Backend(source) = refused.expect_err("a 20 kB key was stored") else { panic!() };
    let error = source.downcast_ref::<mnemograph_checkpoint_postgres::Error>().expect("this crate's error");
    assert!(
        matches!(error, mnemograph_checkpoint_postgres::Error::Sqlx(sqlx::Error::Database(_))),
        "{error:?}"
    );
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        let count: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {table} WHERE thread_id = $1"))
            .bind(&thread)
            .fetch_one(saver.pool())
            .await
            .unwrap();
        assert_eq!(count, 0, "{table}");
    }
    bystander.check(&saver, "an id beyond the index limit").await;
}

#[tokio::test]
async fn values_of_many_megabytes_round_trip() {
    let Some(saver) = support::saver().await else { return };
    let bystander = Bystander::new(&saver, "huge").await;
    let config = CheckpointConfig::thread(support::unique("huge"));
    let big = "x".repeat(24 << 20);
    let saved =
        save(&saver, &config, &[("big", ChannelValue::new(vec![big.clone()]))], Map::new(), ("t", "w")).await;
    let writes = vec![("big".to_owned(), ChannelValue::new(big.clone()))];
    saver.put_writes(&saved, writes, "big-task", "").await.unwrap();
    let tuple = saver.get_tuple(&config).await.unwrap().unwrap();
    let back: Vec<String> = tuple.checkpoint.channel_values["big"].decode().unwrap();
    assert_eq!(back[0].len(), big.len());
    let write = tuple.pending_writes.iter().find(|w| w.task_id == "big-task").expect("the big write");
    assert_eq!(write.value.decode::<String>().unwrap().len(), big.len());
    saver.delete_thread(&config.thread_id).await.unwrap();
    bystander.check(&saver, "values of many megabytes").await;
}

/// Corrupts one row of a fresh thread with `corruption` (SQL with `$1` for the thread id), then
/// checks that reading it fails with `Corrupt`, that a bystander reads as before, and that the
/// thread can still be deleted.
async fn corrupt_row_is_reported(corruption: &str) {
    let Some(saver) = support::saver().await else { return };
    let bystander = Bystander::new(&saver, "corrupt").await;
    let config = CheckpointConfig::thread(support::unique("corrupt"));
    save(&saver, &config, &[("log", ChannelValue::new(vec!["a"]))], Map::new(), ("t", "log")).await;
    let changed = sqlx::query(corruption).bind(&config.thread_id).execute(saver.pool()).await.unwrap();
    assert_eq!(changed.rows_affected(), 1, "{corruption}");

    // Read as another process would: the writer remembers what it stored, and a blob (immutable
    // by its channel and version) edited in place under that checkpoint is not looked at again.
    let reader = PostgresCheckpointer::from_pool(saver.pool().clone());
    let read = reader.get_tuple(&config).await;
    assert!(
        matches!(read, Err(CheckpointError::Corrupt(ref m)) if m.contains(&config.thread_id)),
        "{read:?}"
    );
    let listed = saver.list(Some(&config), ListOptions::new()).await;
    assert!(matches!(listed, Err(CheckpointError::Corrupt(_))), "{listed:?}");
    bystander.check(&saver, "a corrupt row").await;
    saver.delete_thread(&config.thread_id).await.unwrap();
    assert!(saver.get_tuple(&config).await.unwrap().is_none());
}

#[tokio::test]
async fn a_document_without_its_fields_is_corrupt() {
    corrupt_row_is_reported(r#"UPDATE checkpoints SET checkpoint = '{"v": "four"}' WHERE thread_id = $1"#)
        .await;
}

#[tokio::test]
async fn metadata_that_is_not_an_object_is_corrupt() {
    corrupt_row_is_reported("UPDATE checkpoints SET metadata = '[1, 2]' WHERE thread_id = $1").await;
}

#[tokio::test]
async fn a_blob_that_is_not_msgpack_is_corrupt() {
    corrupt_row_is_reported(r"UPDATE checkpoint_blobs SET blob = '\xc1c1' WHERE thread_id = $1").await;
}

#[tokio::test]
async fn a_pending_write_that_is_not_msgpack_is_corrupt() {
    corrupt_row_is_reported(r"UPDATE checkpoint_writes SET blob = '\x92' WHERE thread_id = $1").await;
}

#[tokio::test]
async fn a_commit_without_checkpoints_is_refused() {
    let Some(saver) = support::saver().await else { return };
    let commit = mnemograph_checkpoint::checkpoint::Commit::new(
        CheckpointConfig::thread(support::unique("empty")),
        Vec::new(),
        mnemograph_checkpoint::checkpoint::ExpectParent::Latest,
    );
    assert!(matches!(saver.commit(commit).await, Err(CheckpointError::Invalid(_))));
    let no_id = CheckpointConfig::thread(support::unique("no-id"));
    let refused = saver.put_writes(&no_id, vec![("c".into(), ChannelValue::new(1))], "t", "").await;
    assert!(matches!(refused, Err(CheckpointError::Invalid(_))), "{refused:?}");
}
