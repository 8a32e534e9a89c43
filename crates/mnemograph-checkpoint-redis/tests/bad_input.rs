//! Hostile and broken input against a real Redis (`REDIS_URL`): very long and multi-byte thread
//! ids, ids and namespaces made of key separators, hash-tag braces, glob characters and NUL
//! bytes, 20 MB values, key prefixes that are glob patterns, and hash fields overwritten with
//! garbage behind the saver's back. The steps saved here and the bystander are the shared
//! suite's (`mnemograph_test::conformance`): whatever happens to the thread under attack, an
//! unrelated thread must read exactly as before, key for key.
//!
//! Every test uses its own key prefix, so `list` over all threads sees only this test's threads.
//! Without a server the tests print `SKIPPED` and pass, unless `CI` is set.

mod support;

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::backend::uuid6;
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, Checkpointer, ListOptions};
use mnemograph_checkpoint_redis::{RedisCheckpointer, ThreadKeys};
use mnemograph_test::conformance::{round_trip_two_steps, save_step, step_view, Bystander};
use support::{raw, saver_with};

/// A saver with a key prefix of its own (`label` plus a uuid) and a short TTL, so whatever a
/// failing run leaves behind expires. Without the read cache: these tests damage data behind the
/// writer's back, which the writer would answer from memory (tests/read_cache.rs); another
/// process reads what the server holds, as this one must then.
async fn saver(label: &str) -> Option<RedisCheckpointer> {
    let prefix = format!("bad-input-{label}-{}", uuid6(0));
    let builder = RedisCheckpointer::builder().key_prefix(prefix).ttl(Duration::from_secs(600));
    saver_with(builder.read_cache(0)).await
}

/// Every key of a thread as `DUMP` bytes (empty for a missing key).
async fn dump(keys: &ThreadKeys) -> Vec<Vec<u8>> {
    let mut conn = raw().await;
    let mut out = Vec::new();
    for key in keys.all() {
        let bytes: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query_async(&mut conn).await.expect("DUMP");
        out.push(bytes.unwrap_or_default());
    }
    out
}

/// What the bystander checks behind the saver's back: every key of its thread, as [`dump`] reads
/// them.
fn stored(saver: &RedisCheckpointer) -> impl AsyncFn(&str) -> Vec<Vec<u8>> + '_ {
    async move |thread_id: &str| dump(&saver.thread_keys(thread_id)).await
}

/// Writes two steps of `text` to `config` and reads, lists and filters them back
/// ([`round_trip_two_steps`]); panics naming `what` when the saver refuses.
async fn round_trip(saver: &RedisCheckpointer, config: &CheckpointConfig, text: &str, what: &str) {
    round_trip_two_steps(saver, config, text).await.unwrap_or_else(|e| panic!("{what}: {e:?}"));
}

#[tokio::test]
async fn long_and_multi_byte_thread_ids_round_trip() {
    let Some(saver) = saver("long").await else { return };
    let bystander = Bystander::storing(&saver, "long", stored(&saver)).await;
    let unique = uuid6(0);
    let pad = |c: char, n: usize| -> String { unique.chars().chain(std::iter::repeat(c)).take(n).collect() };
    // No column limit here: 150 and 151 characters behave alike, and so do 10,000.
    for thread in
        [pad('x', 150), pad('x', 151), pad('线', 150), pad('线', 151), pad('🦀', 150), pad('y', 10_000)]
    {
        let config = CheckpointConfig::thread(&thread);
        round_trip(&saver, &config, "你好", &format!("{} chars", thread.chars().count())).await;
        saver.delete_thread(&thread).await.unwrap();
        assert_eq!(support::existing(&saver.thread_keys(&thread)).await, 0);
    }
    bystander.finish(&saver, "long thread ids", stored(&saver)).await;
}

/// Strings that mean something to Redis keys (`:`, `{}` hash tags, `*?[]` globs), to Lua, to
/// JSON or to C.
fn hostile() -> Vec<&'static str> {
    vec![
        "",
        ":",
        "a:b:c",
        "{tag}",
        "}{",
        "*",
        "?",
        "[a-z]",
        "\\",
        "\"quoted\"",
        "it's",
        "nul\0byte",
        "line\nbreak",
        "'; DROP TABLE checkpoints; --",
        "%_",
        "混合 text ✓",
    ]
}

#[tokio::test]
async fn hostile_thread_ids_and_namespaces_round_trip_exactly() {
    let Some(saver) = saver("hostile").await else { return };
    let bystander = Bystander::storing(&saver, "hostile", stored(&saver)).await;
    let mut threads = Vec::new();
    for s in hostile() {
        // The bare string as a thread id, and a unique thread with the string as namespace.
        let named = CheckpointConfig::thread(s);
        round_trip(&saver, &named, s, &format!("thread {s:?}")).await;
        let nested = CheckpointConfig::thread(format!("ns-{}", uuid6(0))).with_ns(s);
        round_trip(&saver, &nested, s, &format!("namespace {s:?}")).await;
        threads.push(s.to_owned());
        threads.push(nested.thread_id);
    }
    // Listing every thread of this prefix finds each hostile id exactly, plus the bystander.
    let all = saver.list(None, ListOptions::new()).await.expect("list all");
    let mut found: Vec<String> = all.iter().map(|t| t.config.thread_id.clone()).collect();
    found.sort();
    found.dedup();
    let mut expected = threads.clone();
    expected.push(bystander.config.thread_id.clone());
    expected.sort();
    assert_eq!(found, expected);
    for thread in &threads {
        saver.delete_thread(thread).await.unwrap();
        assert_eq!(support::existing(&saver.thread_keys(thread)).await, 0, "{thread:?}");
    }
    bystander.finish(&saver, "hostile ids", stored(&saver)).await;
}

/// Two savers whose prefixes differ only in glob characters see only their own threads.
#[tokio::test]
async fn glob_characters_in_key_prefixes_do_not_leak_threads() {
    let base = format!("bad-input-glob-{}", uuid6(0));
    let build = |p: String| RedisCheckpointer::builder().key_prefix(p).ttl(Duration::from_secs(600));
    let Some(globby) = saver_with(build(format!("{base}-*"))).await else { return };
    let Some(plain) = saver_with(build(format!("{base}-x"))).await else { return };
    let Some(class) = saver_with(build(format!("{base}-[xy]"))).await else { return };
    for (saver, thread) in [(&globby, "g"), (&plain, "p"), (&class, "c")] {
        save_step(saver, &CheckpointConfig::thread(thread), 0, thread).await.unwrap();
    }
    for (saver, thread) in [(&globby, "g"), (&plain, "p"), (&class, "c")] {
        let all = saver.list(None, ListOptions::new()).await.unwrap();
        let ids: Vec<&str> = all.iter().map(|t| t.config.thread_id.as_str()).collect();
        assert_eq!(ids, [thread], "a saver listed another prefix's threads");
        saver.delete_thread(thread).await.unwrap();
    }
}

#[tokio::test]
async fn twenty_megabyte_values_round_trip() {
    let Some(saver) = saver("big").await else { return };
    let bystander = Bystander::storing(&saver, "big", stored(&saver)).await;
    let config = CheckpointConfig::thread(format!("big-{}", uuid6(0)));
    let content = "大".repeat((20 << 20) / 3);
    let started = std::time::Instant::now();
    // A failure would have to be a typed error and leave no key; on a default server it works.
    match save_step(&saver, &config, 0, &content).await {
        Ok(_) => {
            let view = step_view(&saver.get_tuple(&config).await.expect("read").expect("saved"));
            assert!(view.text[0] == content, "the 20 MB value came back different");
            assert!(view.writes[0].1[0].len() == content.len() + 4, "the 20 MB write came back different");
        }
        Err(err) => {
            assert!(matches!(err, CheckpointError::Backend(_)), "{err:?}");
            assert_eq!(support::existing(&saver.thread_keys(&config.thread_id)).await, 0, "partial keys");
        }
    }
    eprintln!("20 MB message and write, saved and read in {:?}", started.elapsed());
    saver.delete_thread(&config.thread_id).await.unwrap();
    bystander.finish(&saver, "a 20 MB value", stored(&saver)).await;
}

/// The only field of a hash.
async fn only_field(key: &str) -> String {
    let fields: Vec<String> = redis::cmd("HKEYS").arg(key).query_async(&mut raw().await).await.unwrap();
    assert_eq!(fields.len(), 1, "{key}: {fields:?}");
    fields[0].clone()
}

/// Overwrites `field` of hash `key` with `value`, behind the saver's back.
async fn hset(key: &str, field: &str, value: &[u8]) {
    let _: i64 =
        redis::cmd("HSET").arg(key).arg(field).arg(value).query_async(&mut raw().await).await.unwrap();
}

/// Garbage of several kinds for each hash the saver reads; each read must fail with `Corrupt`
/// naming the key and field, leave the thread's keys as they were, and leave a bystander alone.
#[tokio::test]
async fn corrupted_fields_are_corrupt_errors_and_change_nothing() {
    let Some(saver) = saver("corrupt").await else { return };
    let bystander = Bystander::storing(&saver, "corrupt", stored(&saver)).await;
    let garbage: [&[u8]; 5] =
        [b"", b"\xc1", b"\x92\xa7msgpack\xc4\x01\xc1", b"\x91\xa6pickle", b"{\"not\": \"msgpack\"}"];
    for (i, bad) in garbage.iter().enumerate() {
        for hash in ["blob", "wr", "cp"] {
            let config = CheckpointConfig::thread(format!("corrupt-{hash}-{i}-{}", uuid6(0)));
            save_step(&saver, &config, 0, "soon garbage").await.unwrap();
            let keys = saver.thread_keys(&config.thread_id);
            let key = match hash {
                "blob" => &keys.blobs,
                "wr" => &keys.writes,
                _ => &keys.checkpoints,
            };
            // The `count` channel is inline, so the blob hash holds `text` only.
            let field = only_field(key).await;
            hset(key, &field, bad).await;
            let before = dump(&keys).await;
            let err = saver.get_tuple(&config).await.expect_err("garbage must not read");
            let CheckpointError::Corrupt(message) = &err else { panic!("{hash} {bad:?}: {err:?}") };
            assert!(message.contains(key.as_str()) && message.contains(&field), "{message}");
            let err = saver.list(Some(&config), ListOptions::new()).await.expect_err("garbage must not list");
            assert!(matches!(err, CheckpointError::Corrupt(_)), "{err:?}");
            assert_eq!(dump(&keys).await, before, "a failed read changed the thread");
            saver.delete_thread(&config.thread_id).await.unwrap();
        }
    }
    bystander.finish(&saver, "corrupted fields", stored(&saver)).await;
}

/// The error names what a user knows (thread id, checkpoint id, channel), not only the hex-encoded
/// key and field.
#[tokio::test]
async fn corrupt_blob_error_names_thread_checkpoint_and_channel() {
    let Some(saver) = saver("corrupt-names").await else { return };
    let thread = format!("readable-{}", uuid6(0));
    let config = CheckpointConfig::thread(&thread);
    let saved = save_step(&saver, &config, 0, "x").await.unwrap();
    let keys = saver.thread_keys(&thread);
    let field = only_field(&keys.blobs).await;
    hset(&keys.blobs, &field, b"\xc1").await;
    let err = saver.get_tuple(&config).await.expect_err("garbage");
    saver.delete_thread(&thread).await.unwrap();
    let message = err.to_string();
    let id = saved.checkpoint_id.unwrap_or_default();
    for part in [thread.as_str(), id.as_str(), "text"] {
        assert!(message.contains(part), "`{message}` does not name `{part}`");
    }
}
