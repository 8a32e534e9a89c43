//! The read-only view of what the saver stored (`stored_threads`, `stored_checkpoints`) against
//! a real Redis (`REDIS_URL`): it finds exactly the threads under its own prefix, reads records,
//! blobs and pending writes as the saver wrote them, and reports a damaged field as unreadable
//! where `get_tuple` fails, leaving the other fields readable.
//!
//! Without a server the tests print `SKIPPED` and pass, unless `CI` is set.

mod support;

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version, uuid6};
use mnemograph_checkpoint::checkpoint::serde::loads_typed;
use mnemograph_checkpoint::checkpoint::stored::{StoredValue, StoredView};
use mnemograph_checkpoint::checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer,
};
use mnemograph_checkpoint::messages::Message;
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_redis::RedisCheckpointer;
use support::{raw, saver_with};

/// A saver with a key prefix of its own, without the read cache (the test damages data behind
/// its back).
async fn saver() -> Option<RedisCheckpointer> {
    let prefix = format!("stored-{}", uuid6(0));
    saver_with(RedisCheckpointer::builder().key_prefix(prefix).ttl(Duration::from_secs(600)).read_cache(0))
        .await
}

/// Saves step `step` of `thread` with a `messages` blob, an inline `count` and one pending write.
async fn save(saver: &RedisCheckpointer, at: &CheckpointConfig, step: i64, text: &str) -> CheckpointConfig {
    let mut cp = Checkpoint { v: 4, id: checkpoint_id(step), ..Checkpoint::default() };
    let version: std::sync::Arc<str> = next_version(Some(&step.max(0).to_string())).into();
    cp.channel_values.insert("messages".into(), ChannelValue::new(vec![Message::human(text)]));
    cp.channel_values.insert("count".into(), ChannelValue::new(step));
    cp.channel_versions.insert("messages".into(), version.clone());
    cp.channel_versions.insert("count".into(), version);
    let versions = cp.channel_versions.clone();
    let saved = saver
        .put(at, cp, CheckpointMetadata::new(CheckpointSource::Loop, step), versions)
        .await
        .expect("put");
    let write = ("reply".to_owned(), ChannelValue::new(format!("re: {text}")));
    saver.put_writes(&saved, vec![write], "task-1", "").await.expect("put_writes");
    saved
}

#[tokio::test]
async fn stored_threads_lists_this_prefix_newest_first() {
    let Some(saver) = saver().await else { return };
    let older = CheckpointConfig::thread("线程 a:{1}");
    let newer = CheckpointConfig::thread("thread-b");
    save(&saver, &older, 0, "first").await;
    save(&saver, &older.clone().with_ns("child:1"), 0, "nested").await;
    let latest = save(&saver, &newer, 1, "second").await;

    let threads = saver.stored_threads(10).await.expect("stored_threads");
    let ids: Vec<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
    assert_eq!(ids, ["thread-b", "线程 a:{1}"], "only this prefix's threads, newest first");
    assert_eq!(threads[0].latest_id, latest.checkpoint_id.clone().unwrap());
    assert_eq!((threads[1].checkpoints, threads[1].namespaces), (2, 2));
    let record = threads[0].latest_record.as_ref().expect("the latest record");
    assert_eq!(record.metadata["step"], 1);
    assert_eq!(saver.stored_threads(1).await.unwrap().len(), 1, "the limit holds");
}

#[tokio::test]
async fn stored_checkpoints_read_as_written_and_report_damage_field_by_field() {
    let Some(saver) = saver().await else { return };
    let thread = CheckpointConfig::thread(format!("t-{}", uuid6(0)));
    let first = save(&saver, &thread, 0, "hello").await;
    let second = save(&saver, &first, 1, "again").await;

    let stored = saver.stored_checkpoints(&thread.thread_id, "", None, None).await.expect("read");
    let ids: Vec<&str> = stored.iter().map(|c| c.checkpoint_id.as_str()).collect();
    assert_eq!(ids, [second.checkpoint_id.as_deref().unwrap(), first.checkpoint_id.as_deref().unwrap()]);
    let newest = &stored[0];
    let record = newest.record.as_ref().expect("a readable record");
    assert_eq!(record.parent_checkpoint_id, first.checkpoint_id);
    assert_eq!(newest.blobs.len(), 1, "{:?}", newest.blobs);
    let (channel, StoredValue::Typed { kind, payload }) = &newest.blobs[0] else {
        panic!("{:?}", newest.blobs)
    };
    assert_eq!(channel, "messages");
    let messages: Vec<Message> = loads_typed(kind, payload).unwrap().decode().unwrap();
    assert_eq!(messages[0].text(), "again");
    assert_eq!(newest.writes.len(), 1);
    assert_eq!((newest.writes[0].task_id.as_str(), newest.writes[0].idx), ("task-1", 0));
    assert_eq!(newest.writes[0].channel.as_deref(), Some("reply"));

    // Only one checkpoint, by id.
    let only =
        saver.stored_checkpoints(&thread.thread_id, "", first.checkpoint_id.as_deref(), None).await.unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].checkpoint_id, first.checkpoint_id.clone().unwrap());

    // Damage the newest checkpoint's blob: the saver refuses the read, the view reports it.
    let keys = saver.thread_keys(&thread.thread_id);
    let fields: Vec<String> =
        redis::cmd("HKEYS").arg(&keys.blobs).query_async(&mut raw().await).await.expect("HKEYS");
    for field in &fields {
        let _: i64 = redis::cmd("HSET")
            .arg(&keys.blobs)
            .arg(field)
            .arg(&b"\xc1garbage"[..])
            .query_async(&mut raw().await)
            .await
            .expect("HSET");
    }
    assert!(saver.get_tuple(&thread).await.is_err(), "the saver refuses a damaged blob");
    let stored =
        saver.stored_checkpoints(&thread.thread_id, "", None, Some(1)).await.expect("still readable");
    assert_eq!(stored.len(), 1, "the limit holds");
    assert!(stored[0].record.is_ok(), "the record is untouched");
    assert!(
        matches!(&stored[0].blobs[..], [(c, StoredValue::Unreadable { reason, bytes })]
            if c == "messages" && reason.contains("msgpack") && bytes == b"\xc1garbage"),
        "{:?}",
        stored[0].blobs
    );
    assert_eq!(stored[0].writes[0].channel.as_deref(), Some("reply"), "the writes still read");
}

#[tokio::test]
async fn a_missing_record_is_reported_not_fatal() {
    let Some(saver) = saver().await else { return };
    let thread = CheckpointConfig::thread(format!("t-{}", uuid6(0)));
    let saved = save(&saver, &thread, 0, "hello").await;
    let keys = saver.thread_keys(&thread.thread_id);
    let _: i64 = redis::cmd("DEL").arg(&keys.checkpoints).query_async(&mut raw().await).await.expect("DEL");
    let stored = saver.stored_checkpoints(&thread.thread_id, "", None, None).await.expect("read");
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].checkpoint_id, saved.checkpoint_id.unwrap());
    let problem = stored[0].record.as_ref().expect_err("no record");
    assert!(problem.contains("missing"), "{problem}");
}
