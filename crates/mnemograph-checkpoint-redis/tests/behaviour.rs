//! What the conformance suite does not cover: expiry of whole threads, pinning, corrupt data,
//! shallow mode and settings. Needs a Redis server (see `support`); skips without one outside CI.

mod support;

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::backend::checkpoint_id;
use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource,
    Checkpointer, ListOptions,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_redis::{RedisCheckpointer, RedisSaverError, ThreadKeys};
use support::{deadlines, existing, raw, saver_with, thread};

/// A LangGraph-shaped version with counter `n`.
fn ver(n: u64) -> std::sync::Arc<str> {
    format!("{n:032}.0.{n}").into()
}

/// Saves a checkpoint at `step` on top of `parent`: `set` channels get version `step + 1` and a
/// one-item list value (lists always go to blobs), `keep` channels keep the version `n` given.
async fn put(
    saver: &RedisCheckpointer,
    parent: &CheckpointConfig,
    step: i64,
    set: &[&str],
    keep: &[(&str, u64)],
) -> CheckpointConfig {
    let mut cp = Checkpoint {
        v: 4,
        id: checkpoint_id(step),
        ts: "2026-01-01T00:00:00+00:00".into(),
        ..Default::default()
    };
    let mut new_versions = ChannelVersions::new();
    let version = ver(step as u64 + 1);
    for channel in set {
        cp.channel_values.insert((*channel).into(), ChannelValue::new(vec![format!("{channel}@{step}")]));
        cp.channel_versions.insert((*channel).into(), version.clone());
        new_versions.insert((*channel).into(), version.clone());
    }
    for (channel, n) in keep {
        cp.channel_versions.insert((*channel).into(), ver(*n));
    }
    let meta = CheckpointMetadata::new(CheckpointSource::Loop, step);
    saver.put(parent, cp, meta, new_versions).await.expect("put")
}

async fn write(saver: &RedisCheckpointer, at: &CheckpointConfig, task: &str, channel: &str) {
    let value = ChannelValue::new(vec![format!("{task}->{channel}")]);
    saver.put_writes(at, vec![(channel.to_owned(), value)], task, "").await.expect("put_writes");
}

/// The value of `channel` in the tuple at `config`, decoded.
async fn item(saver: &RedisCheckpointer, config: &CheckpointConfig, channel: &str) -> Option<String> {
    let tuple = saver.get_tuple(config).await.expect("get_tuple")?;
    let value = tuple.checkpoint.channel_values.get(channel)?;
    Some(value.decode::<Vec<String>>().expect("decode")[0].clone())
}

/// Asserts that every key of the thread exists and that they share one future deadline; returns it.
async fn one_deadline(keys: &ThreadKeys, max: Duration) -> i64 {
    let all = deadlines(keys).await;
    assert_eq!(all.len(), ThreadKeys::COUNT, "every key exists: {all:?}");
    let first = all[0].1;
    assert!(all.iter().all(|(_, at)| *at == first), "one deadline for all keys: {all:?}");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    assert!(first > now && first <= now + max.as_millis() as i64 + 50, "deadline {first} vs now {now}");
    first
}

macro_rules! saver_or_skip {
    ($builder:expr) => {
        match saver_with($builder).await {
            Some(saver) => saver,
            None => return,
        }
    };
}

#[tokio::test]
async fn every_key_of_a_thread_gets_the_same_deadline() {
    let saver = saver_or_skip!(RedisCheckpointer::builder().ttl(Duration::from_secs(2)));
    let config = CheckpointConfig::thread(thread("ttl"));
    let c1 = put(&saver, &config, 0, &["a"], &[]).await;
    write(&saver, &c1, "task", "a").await;
    let keys = saver.thread_keys(&config.thread_id);
    let first = one_deadline(&keys, Duration::from_secs(2)).await;

    // A later write moves the deadline of the whole thread, old keys included.
    tokio::time::sleep(Duration::from_millis(30)).await;
    write(&saver, &c1, "task-2", "b").await;
    let second = one_deadline(&keys, Duration::from_secs(2)).await;
    assert!(second > first, "{second} > {first}");
    let mut conn = raw().await;
    let pttl: i64 = redis::cmd("PTTL").arg(&keys.blobs).query_async(&mut conn).await.unwrap();
    assert!(pttl > 0 && pttl <= 2000, "PTTL {pttl}");
}

#[tokio::test]
async fn reads_refresh_the_deadline_only_when_configured() {
    let plain = saver_or_skip!(RedisCheckpointer::builder().ttl(Duration::from_secs(5)));
    let refreshing =
        saver_or_skip!(RedisCheckpointer::builder().ttl(Duration::from_secs(5)).refresh_on_read(true));
    let config = CheckpointConfig::thread(thread("refresh"));
    let c1 = put(&plain, &config, 0, &["a"], &[]).await;
    write(&plain, &c1, "task", "a").await;
    let keys = plain.thread_keys(&config.thread_id);
    let before = one_deadline(&keys, Duration::from_secs(5)).await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    plain.get_tuple(&config).await.unwrap().unwrap();
    plain.list(Some(&config), ListOptions::new()).await.unwrap();
    assert_eq!(one_deadline(&keys, Duration::from_secs(5)).await, before, "plain reads leave expiry alone");
    refreshing.get_tuple(&config).await.unwrap().unwrap();
    assert!(one_deadline(&keys, Duration::from_secs(5)).await > before, "refresh_on_read moves it");
}

#[tokio::test]
async fn without_ttl_nothing_expires_even_keys_an_expiring_saver_wrote() {
    let expiring = saver_or_skip!(RedisCheckpointer::builder().ttl(Duration::from_secs(60)));
    let forever = saver_or_skip!(RedisCheckpointer::builder().no_ttl());
    assert_eq!(forever.ttl(), None);
    let config = CheckpointConfig::thread(thread("no-ttl"));
    let c1 = put(&expiring, &config, 0, &["a"], &[]).await;
    write(&expiring, &c1, "task", "a").await;
    put(&forever, &c1, 1, &["b"], &[("a", 1)]).await;
    let all = deadlines(&forever.thread_keys(&config.thread_id)).await;
    assert_eq!(all.len(), ThreadKeys::COUNT);
    assert!(all.iter().all(|(_, at)| *at == -1), "no key expires: {all:?}");
    forever.delete_thread(&config.thread_id).await.unwrap();
}

#[tokio::test]
async fn an_expired_thread_is_gone_whole() {
    let saver = saver_or_skip!(RedisCheckpointer::builder().ttl(Duration::from_secs(1)));
    let config = CheckpointConfig::thread(thread("expire"));
    let c1 = put(&saver, &config, 0, &["a"], &[]).await;
    let c2 = put(&saver, &c1, 1, &["b"], &[("a", 1)]).await;
    write(&saver, &c2, "task", "a").await;
    put(&saver, &config.clone().with_ns("child:1"), 0, &["c"], &[]).await;
    let keys = saver.thread_keys(&config.thread_id);
    assert_eq!(existing(&keys).await, ThreadKeys::COUNT);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert_eq!(existing(&keys).await, 0, "no key outlives the others");
    assert!(saver.get_tuple(&config).await.unwrap().is_none());
    assert!(saver.get_tuple(&c1).await.unwrap().is_none());
    assert!(saver.list(Some(&config), ListOptions::new()).await.unwrap().is_empty());
}

#[tokio::test]
async fn pin_removes_expiry_until_unpinned() {
    let saver = saver_or_skip!(RedisCheckpointer::builder().ttl(Duration::from_secs(2)));
    let config = CheckpointConfig::thread(thread("pin"));
    let c1 = put(&saver, &config, 0, &["a"], &[]).await;
    write(&saver, &c1, "task", "a").await;
    let keys = saver.thread_keys(&config.thread_id);
    assert!(saver.pin(&config.thread_id).await.unwrap());
    let pinned =
        |all: &[(String, i64)]| all.len() == ThreadKeys::COUNT && all.iter().all(|(_, at)| *at == -1);
    assert!(pinned(&deadlines(&keys).await));
    // Writes to a pinned thread keep it pinned.
    put(&saver, &c1, 1, &["b"], &[("a", 1)]).await;
    assert!(pinned(&deadlines(&keys).await));
    assert!(saver.unpin(&config.thread_id).await.unwrap());
    one_deadline(&keys, Duration::from_secs(2)).await;
    saver.delete_thread(&config.thread_id).await.unwrap();

    // Pinning a thread that does not exist creates nothing.
    let ghost = thread("ghost");
    assert!(!saver.pin(&ghost).await.unwrap());
    assert_eq!(existing(&saver.thread_keys(&ghost)).await, 0);
}

/// Every key of the thread as raw data, to check that a failing read changed nothing.
async fn snapshot(keys: &ThreadKeys) -> Vec<Vec<u8>> {
    let mut conn = raw().await;
    let mut out = Vec::new();
    for key in keys.all() {
        let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query_async(&mut conn).await.unwrap();
        out.push(dump.unwrap_or_default());
    }
    out
}

/// The only field of a hash.
async fn only_field(key: &str) -> String {
    let fields: Vec<String> = redis::cmd("HKEYS").arg(key).query_async(&mut raw().await).await.unwrap();
    assert_eq!(fields.len(), 1, "{fields:?}");
    fields[0].clone()
}

async fn hset(key: &str, field: &str, value: &[u8]) {
    let _: i64 =
        redis::cmd("HSET").arg(key).arg(field).arg(value).query_async(&mut raw().await).await.unwrap();
}

/// Asserts the error is `Corrupt` and names `key` and `field`.
fn assert_names(err: &CheckpointError, key: &str, field: &str) {
    let CheckpointError::Corrupt(msg) = err else { panic!("not Corrupt: {err:?}") };
    assert!(msg.contains(key) && msg.contains(field), "{msg}");
}

#[tokio::test]
async fn a_corrupt_blob_is_reported_by_key_and_nothing_is_touched() {
    // Without the read cache: the damage is behind the writer's back, which would answer from
    // memory (tests/read_cache.rs).
    let saver = saver_or_skip!(RedisCheckpointer::builder().ttl(Duration::from_secs(60)).read_cache(0));
    let config = CheckpointConfig::thread(thread("corrupt"));
    let c1 = put(&saver, &config, 0, &["a"], &[]).await;
    write(&saver, &c1, "task", "a").await;
    let keys = saver.thread_keys(&config.thread_id);
    let field = only_field(&keys.blobs).await;
    hset(&keys.blobs, &field, b"\xffgarbage").await;
    let before = snapshot(&keys).await;

    let err = saver.get_tuple(&config).await.unwrap_err();
    assert_names(&err, &keys.blobs, &field);
    let err = saver.list(Some(&config), ListOptions::new()).await.unwrap_err();
    assert_names(&err, &keys.blobs, &field);
    assert_eq!(snapshot(&keys).await, before, "a failed read changes nothing");

    // A payload of the wrong format inside a valid wrapper is caught too.
    let bad = rmp_like_blob(b"\x92\x01");
    hset(&keys.blobs, &field, &bad).await;
    assert_names(&saver.get_tuple(&config).await.unwrap_err(), &keys.blobs, &field);
    saver.delete_thread(&config.thread_id).await.unwrap();
}

/// msgpack `["msgpack", bin(payload)]`, the saver's blob wrapper, written by hand.
fn rmp_like_blob(payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0x92, 0xa7];
    out.extend_from_slice(b"msgpack");
    out.extend_from_slice(&[0xc4, payload.len() as u8]);
    out.extend_from_slice(payload);
    out
}

#[tokio::test]
async fn missing_records_and_corrupt_writes_are_reported_by_key() {
    let saver = saver_or_skip!(RedisCheckpointer::builder().ttl(Duration::from_secs(60)));
    let config = CheckpointConfig::thread(thread("missing"));
    let c1 = put(&saver, &config, 0, &["a"], &[]).await;
    write(&saver, &c1, "task", "a").await;
    let keys = saver.thread_keys(&config.thread_id);

    let write_field = only_field(&keys.writes).await;
    hset(&keys.writes, &write_field, b"not a write").await;
    assert_names(&saver.get_tuple(&c1).await.unwrap_err(), &keys.writes, &write_field);

    let member = only_field(&keys.checkpoints).await;
    let _: i64 =
        redis::cmd("HDEL").arg(&keys.checkpoints).arg(&member).query_async(&mut raw().await).await.unwrap();
    let err = saver.get_tuple(&config).await.unwrap_err();
    assert_names(&err, &keys.checkpoints, &member);
    assert!(err.to_string().contains("missing"), "{err}");
    saver.delete_thread(&config.thread_id).await.unwrap();
}

#[tokio::test]
async fn shallow_mode_keeps_only_the_latest_checkpoint_per_namespace() {
    let saver = saver_or_skip!(RedisCheckpointer::builder().ttl(Duration::from_secs(60)).shallow(true));
    assert!(saver.is_shallow());
    let root = CheckpointConfig::thread(thread("shallow"));
    let child = root.clone().with_ns("child:1");
    let k1 = put(&saver, &child, 0, &["k"], &[]).await;
    let c1 = put(&saver, &root, 0, &["a", "b"], &[]).await;
    write(&saver, &c1, "task", "a").await;
    let c2 = put(&saver, &c1, 1, &["a"], &[("b", 1)]).await;
    write(&saver, &c2, "task", "a").await;
    let c3 = put(&saver, &c2, 2, &["a"], &[("b", 1)]).await;

    let listed = saver.list(Some(&root), ListOptions::new()).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].config, c3);
    assert!(listed[0].pending_writes.is_empty(), "writes of replaced checkpoints are dropped");
    assert!(saver.get_tuple(&c1).await.unwrap().is_none());
    // `b` was never rewritten: its first value is still read through the latest checkpoint.
    assert_eq!(item(&saver, &root, "b").await.as_deref(), Some("b@0"));
    assert_eq!(item(&saver, &root, "a").await.as_deref(), Some("a@2"));
    // Only the blobs the two latest checkpoints read are left (root a@2, b@0; child k@0).
    let keys = saver.thread_keys(&root.thread_id);
    let mut conn = raw().await;
    let blobs: i64 = redis::cmd("HLEN").arg(&keys.blobs).query_async(&mut conn).await.unwrap();
    assert_eq!(blobs, 3);
    let writes: i64 = redis::cmd("HLEN").arg(&keys.writes).query_async(&mut conn).await.unwrap();
    assert_eq!(writes, 0);
    // The other namespace is untouched.
    assert_eq!(saver.get_tuple(&child).await.unwrap().unwrap().config, k1);
    // Writes against the latest checkpoint are kept until the next put.
    write(&saver, &c3, "task", "a").await;
    assert_eq!(saver.get_tuple(&root).await.unwrap().unwrap().pending_writes.len(), 1);

    saver.delete_thread(&root.thread_id).await.unwrap();
    assert_eq!(existing(&keys).await, 0);
}

#[tokio::test]
async fn put_writes_without_a_checkpoint_id_is_invalid() {
    let saver = saver_or_skip!(RedisCheckpointer::builder());
    let err = saver.put_writes(&CheckpointConfig::thread(thread("w")), vec![], "t", "").await.unwrap_err();
    assert!(matches!(err, CheckpointError::Invalid(_)), "{err:?}");
}

#[tokio::test]
async fn bad_settings_are_rejected() {
    let Some(probe) = saver_with(RedisCheckpointer::builder()).await else { return };
    drop(probe);
    let url = support::redis_url();
    let err = RedisCheckpointer::builder().key_prefix("a{b}").connect(&url).await.unwrap_err();
    assert!(matches!(err, RedisSaverError::Invalid(_)), "{err}");
    let err = RedisCheckpointer::builder().ttl(Duration::from_micros(10)).connect(&url).await.unwrap_err();
    assert!(matches!(err, RedisSaverError::Invalid(_)), "{err}");
}

#[tokio::test]
async fn the_connection_reconnects_after_the_server_drops_it() {
    if !support::redis_available() {
        return;
    }
    let client = redis::Client::open(support::redis_url()).unwrap();
    let mut manager = client.get_connection_manager().await.unwrap();
    let id: i64 = redis::cmd("CLIENT").arg("ID").query_async(&mut manager).await.unwrap();
    let builder = RedisCheckpointer::builder().ttl(Duration::from_secs(60));
    let saver = builder.with_connection_manager(manager).unwrap();
    let config = CheckpointConfig::thread(thread("reconnect"));
    let saved = put(&saver, &config, 0, &["a"], &[]).await;

    // Only this saver's socket is killed: other tests share the server.
    let killed: i64 =
        redis::cmd("CLIENT").arg("KILL").arg("ID").arg(id).query_async(&mut raw().await).await.unwrap();
    assert_eq!(killed, 1);
    // The call that meets the dead socket may fail; the manager reconnects by itself.
    let start = std::time::Instant::now();
    let tuple = loop {
        match saver.get_tuple(&config).await {
            Ok(tuple) => break tuple.expect("the thread survives"),
            Err(err) => assert!(start.elapsed() < Duration::from_secs(5), "no reconnect within 5 s: {err}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(tuple.config, saved);
    saver.delete_thread(&config.thread_id).await.unwrap();
}
