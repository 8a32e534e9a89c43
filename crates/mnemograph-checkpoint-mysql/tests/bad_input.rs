//! Hostile and broken input against a real MariaDB/MySQL (`MYSQL_URL`), in the database
//! `bad_input_test`: ids at and past the column limits, values larger than the server accepts in
//! one packet, and rows corrupted behind the saver's back. Hostile ids, namespaces and channel
//! names are the shared suite's (`mnemograph_test::conformance`, run by `tests/conformance.rs`),
//! and so are the steps saved here and the bystander: whatever happens to the thread under
//! attack, an unrelated thread must read exactly as before, keep its rows, and the tables must
//! still be there.
//!
//! Without a server the tests print `SKIPPED` and pass, unless `CI` is set.

mod support;

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version, uuid6};
use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource,
    Checkpointer, ListOptions,
};
use mnemograph_checkpoint::messages::Message;
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_mysql::{Error, MySqlCheckpointer};
use mnemograph_test::conformance::{round_trip_two_steps, save_step, Bystander};

/// This file's database; tests share it and keep apart by thread id.
const DB: &str = "bad_input_test";

async fn saver() -> Option<MySqlCheckpointer> {
    let saver = support::saver_on(DB).await?;
    saver.setup().await.expect("setup");
    Some(saver)
}

/// A checkpoint holding `messages` (a blob) and `count` (inline), all with new versions.
fn checkpoint(step: i64, messages: Vec<Message>) -> (Checkpoint, ChannelVersions) {
    let mut cp = Checkpoint {
        v: 4,
        id: checkpoint_id(step),
        ts: mnemograph_checkpoint::checkpoint::backend::now_iso(),
        ..Default::default()
    };
    let version: std::sync::Arc<str> = next_version(Some(&step.max(0).to_string())).into();
    cp.channel_values.insert("messages".into(), ChannelValue::new(messages));
    cp.channel_values.insert("count".into(), ChannelValue::new(step));
    cp.channel_versions.insert("messages".into(), version.clone());
    cp.channel_versions.insert("count".into(), version);
    let versions = cp.channel_versions.clone();
    (cp, versions)
}

/// Rows of exactly this thread (binary comparison: the columns' collation is case-insensitive).
async fn rows(saver: &MySqlCheckpointer, thread_id: &str) -> [i64; 3] {
    let mut out = [0; 3];
    for (i, table) in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"].iter().enumerate() {
        out[i] = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE BINARY thread_id = ?"))
            .bind(thread_id)
            .fetch_one(saver.pool())
            .await
            .expect("the table still exists");
    }
    out
}

/// What the bystander checks behind the saver's back: its [`rows`].
fn stored(saver: &MySqlCheckpointer) -> impl AsyncFn(&str) -> [i64; 3] + '_ {
    async move |thread_id: &str| rows(saver, thread_id).await
}

/// A string of `n` CJK characters unique to this run (the first 32 spell a uuid).
fn chinese(n: usize) -> String {
    let hex = uuid6(0).replace('-', "");
    let unique = hex.chars().map(|c| char::from_u32(0x4e00 + c.to_digit(16).unwrap_or(0)).unwrap_or('线'));
    unique.chain(std::iter::repeat('线')).take(n).collect()
}

/// `n` characters, ASCII, unique to this run.
fn ascii(n: usize) -> String {
    let id = uuid6(0);
    id.chars().chain(std::iter::repeat('x')).take(n).collect()
}

#[tokio::test]
async fn thread_ids_at_the_column_limit_round_trip() {
    let Some(saver) = saver().await else { return };
    let bystander = Bystander::storing(&saver, "limit", stored(&saver)).await;
    let emoji: String = ascii(36).chars().chain(std::iter::repeat('🦀')).take(150).collect();
    for thread in [ascii(150), chinese(150), emoji] {
        assert_eq!(thread.chars().count(), 150);
        let config = CheckpointConfig::thread(&thread);
        round_trip_two_steps(&saver, &config, "你好").await.expect("150 characters fit");
        saver.delete_thread(&thread).await.unwrap();
        assert_eq!(rows(&saver, &thread).await, [0, 0, 0]);
    }
    bystander.finish(&saver, "150-character ids", stored(&saver)).await;
}

#[tokio::test]
async fn thread_ids_beyond_the_limit_are_refused_and_nothing_is_stored() {
    let Some(saver) = saver().await else { return };
    let bystander = Bystander::storing(&saver, "overlong", stored(&saver)).await;
    for thread in [ascii(151), chinese(151), ascii(10_000)] {
        let config = CheckpointConfig::thread(&thread);
        let err = save_step(&saver, &config, 0, "hello").await.expect_err("151 characters do not fit");
        assert!(matches!(&err, CheckpointError::Invalid(m) if m.contains("`thread_id`")), "{err:?}");
        // put_writes is checked on its own too.
        let at = config.clone().with_checkpoint_id(checkpoint_id(0));
        let err = saver.put_writes(&at, vec![("a".into(), ChannelValue::new(1))], "t", "").await;
        assert!(matches!(&err, Err(CheckpointError::Invalid(m)) if m.contains("`thread_id`")), "{err:?}");
        // Nothing was stored, not even under the id cut to the column's length.
        let truncated: String = thread.chars().take(150).collect();
        assert_eq!(rows(&saver, &truncated).await, [0, 0, 0]);
        assert!(saver.get_tuple(&config).await.unwrap().is_none());
    }
    bystander.finish(&saver, "overlong ids", stored(&saver)).await;
}

/// The server's `max_allowed_packet`.
async fn max_packet(saver: &MySqlCheckpointer) -> usize {
    let bytes: u64 = sqlx::query_scalar("SELECT @@max_allowed_packet").fetch_one(saver.pool()).await.unwrap();
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

/// Saves a checkpoint holding one message of `bytes` bytes, reads it, then adds a pending write
/// of the same size and reads again. Each step either works and reads the value back whole, or
/// fails with a typed error leaving no row of that step; a read may fail, but never return the
/// checkpoint without the value. `Err` describes the first failure.
async fn save_big(saver: &MySqlCheckpointer, bytes: usize) -> Result<(), String> {
    let config = CheckpointConfig::thread(support::unique(&format!("big-{}", bytes >> 20)));
    let result = save_and_read_big(saver, &config, bytes).await;
    saver.delete_thread(&config.thread_id).await.unwrap();
    result
}

async fn save_and_read_big(
    saver: &MySqlCheckpointer,
    config: &CheckpointConfig,
    bytes: usize,
) -> Result<(), String> {
    let content = "大".repeat(bytes / 3);
    let (cp, versions) = checkpoint(0, vec![Message::human(content.as_str())]);
    let put = saver.put(config, cp, CheckpointMetadata::new(CheckpointSource::Loop, 0), versions).await;
    let saved = put.map_err(|err| {
        assert_driver_error(&err);
        format!("put: {err}: {:?}", std::error::Error::source(&err))
    });
    if saved.is_err() {
        // put is one transaction: no blob without its checkpoint.
        assert_eq!(rows(saver, &config.thread_id).await, [0, 0, 0], "partial rows after a failed put");
    }
    let saved = saved?;
    read_whole(saver, config, &content, 0).await?;
    let write = ("messages".to_owned(), ChannelValue::new(vec![Message::ai(content.as_str())]));
    if let Err(err) = saver.put_writes(&saved, vec![write], "task-1", "").await {
        assert_driver_error(&err);
        assert_eq!(rows(saver, &config.thread_id).await, [1, 1, 0], "partial rows after a failed put_writes");
        return Err(format!("put_writes: {err}: {:?}", std::error::Error::source(&err)));
    }
    read_whole(saver, config, &content, 1).await
}

fn assert_driver_error(err: &CheckpointError) {
    let CheckpointError::Backend(source) = err else { panic!("untyped failure: {err:?}") };
    assert!(matches!(source.downcast_ref::<Error>(), Some(Error::Sqlx(_))), "{source:?}");
}

/// Reads the checkpoint: an error is fine (and returned), a checkpoint missing the big message
/// or the expected number of pending writes is not.
async fn read_whole(
    saver: &MySqlCheckpointer,
    config: &CheckpointConfig,
    content: &str,
    writes: usize,
) -> Result<(), String> {
    let tuple = match saver.get_tuple(config).await {
        Ok(tuple) => tuple.expect("saved"),
        Err(err) => return Err(format!("read: {err}")),
    };
    let messages = tuple.checkpoint.channel_values.get("messages").map(|v| v.decode::<Vec<Message>>());
    let Some(Ok(messages)) = messages else { panic!("the checkpoint read back without its value") };
    assert!(messages[0].text() == content, "the message came back different");
    assert_eq!(tuple.pending_writes.len(), writes, "pending writes dropped");
    Ok(())
}

/// Room in one packet for everything a statement sends besides the value itself: the other
/// parameters, the statement header and the blob's msgpack and message framing are a few KiB,
/// so a value this far under `max_allowed_packet` always goes in one statement.
const PACKET_HEADROOM: usize = 1 << 20;

#[tokio::test]
async fn oversized_values_fail_cleanly_or_round_trip() {
    let Some(saver) = saver().await else { return };
    let bystander = Bystander::storing(&saver, "big", stored(&saver)).await;
    let limit = max_packet(&saver).await;
    // 20 MB: fails on MariaDB's 16 MiB default, fits MySQL 8's 64 MiB; which one is decided by
    // the server's limit, so the outcome is too.
    let twenty = 20 << 20;
    let outcome = save_big(&saver, twenty).await;
    eprintln!("20 MB message with max_allowed_packet {limit}: {outcome:?}");
    if twenty + PACKET_HEADROOM <= limit {
        outcome.unwrap_or_else(|err| panic!("20 MB fits max_allowed_packet {limit}, yet {err}"));
    } else if twenty > limit {
        outcome.expect_err("a value larger than max_allowed_packet was stored");
    }
    // Beyond the packet limit: can never be sent in one statement.
    let err = save_big(&saver, limit + (1 << 20)).await.expect_err("a value larger than max_allowed_packet");
    eprintln!("{} MB message: {err}", (limit >> 20) + 1);
    bystander.finish(&saver, "oversized values", stored(&saver)).await;
}

/// Values that fit in one packet on the way in, but whose base64 form in the read statement's
/// JSON aggregate is larger than `max_allowed_packet` (over a quarter of it counts as too large
/// for the aggregate): each is stored, read back whole, given a pending write of the same size and
/// read back again. The server accepts every one of them, so every step must succeed.
#[tokio::test]
async fn values_near_the_packet_limit_are_never_dropped_on_read() {
    let Some(saver) = saver().await else { return };
    let limit = max_packet(&saver).await;
    if limit > 64 << 20 {
        eprintln!("SKIPPED: max_allowed_packet is {limit}; this test needs it at most 64 MiB");
        return;
    }
    let bystander = Bystander::storing(&saver, "near-limit", stored(&saver)).await;
    // Just past the aggregate's quarter, 80 % (its base64 is larger than the limit), and as close
    // to the limit as one statement allows.
    for bytes in [limit / 4 + (64 << 10), limit / 10 * 8, limit - PACKET_HEADROOM] {
        let percent = bytes * 100 / limit;
        save_big(&saver, bytes)
            .await
            .unwrap_or_else(|err| panic!("{bytes} bytes ({percent}% of max_allowed_packet {limit}): {err}"));
        eprintln!("{bytes} bytes ({percent}% of max_allowed_packet {limit}): stored and read back whole");
    }
    bystander.finish(&saver, "values near the packet limit", stored(&saver)).await;
}

#[tokio::test]
async fn corrupted_rows_are_corrupt_errors_naming_thread_checkpoint_and_channel() {
    let Some(writer) = saver().await else { return };
    // Read as another process would: the writer itself remembers what it stored and answers
    // from memory while the checkpoint row is unchanged (see `with_read_cache`).
    let saver = MySqlCheckpointer::from_pool(writer.pool().clone());
    let bystander = Bystander::storing(&saver, "corrupt", stored(&saver)).await;
    // Each statement is run with the thread id bound to its `?`.
    const BLOB: &str = "UPDATE checkpoint_blobs SET `blob` = X'c1ff00' WHERE BINARY thread_id = ? \
                        AND channel = 'text'";
    // A type the crate does not read (`pickle`) is kept for the caller to decode; none is corrupt.
    const BLOB_TYPE: &str = "UPDATE checkpoint_blobs SET type = '' WHERE BINARY thread_id = ? \
                             AND channel = 'text'";
    const WRITE: &str = "UPDATE checkpoint_writes SET `blob` = X'92' WHERE BINARY thread_id = ?";
    const DOCUMENT: &str =
        "UPDATE checkpoints SET checkpoint = '{\"v\": \"four\"}' WHERE BINARY thread_id = ?";
    const VERSIONS: &str = "UPDATE checkpoints SET checkpoint = \
        JSON_SET(checkpoint, '$.channel_versions', JSON_ARRAY(1)) WHERE BINARY thread_id = ?";
    const METADATA: &str = "UPDATE checkpoints SET metadata = '[1, 2]' WHERE BINARY thread_id = ?";
    let corruptions = [
        ("blob", BLOB, "text"),
        ("blob type", BLOB_TYPE, "text"),
        ("write", WRITE, "reply"),
        ("document", DOCUMENT, "`v`"),
        ("versions", VERSIONS, "channel_versions"),
        ("metadata", METADATA, "metadata"),
    ];
    for (what, statement, names) in corruptions {
        let thread = support::unique(&format!("corrupt-{}", what.replace(' ', "-")));
        let config = CheckpointConfig::thread(&thread);
        let saved = save_step(&writer, &config, 0, "soon garbage").await.unwrap();
        let id = saved.checkpoint_id.clone().unwrap_or_default();
        let changed =
            sqlx::query(statement).bind(&thread).execute(saver.pool()).await.unwrap().rows_affected();
        assert!(changed > 0, "{what}: the corruption did not apply");
        let err = saver.get_tuple(&config).await.expect_err(what);
        let CheckpointError::Corrupt(message) = &err else { panic!("{what}: {err:?}") };
        for part in [thread.as_str(), id.as_str(), names] {
            assert!(message.contains(part), "{what}: `{message}` does not name `{part}`");
        }
        let err = saver.list(Some(&config), ListOptions::new()).await.expect_err(what);
        assert!(matches!(err, CheckpointError::Corrupt(_)), "{what}: {err:?}");
        saver.delete_thread(&thread).await.unwrap();
    }
    bystander.finish(&saver, "corrupted rows", stored(&saver)).await;
}

/// Metadata that is a JSON object but lacks LangGraph's keys is reported like every other
/// corruption: naming the thread and the checkpoint.
#[tokio::test]
async fn metadata_without_source_names_thread_and_checkpoint() {
    let Some(saver) = saver().await else { return };
    let thread = support::unique("corrupt-metadata-keys");
    let config = CheckpointConfig::thread(&thread);
    let saved = save_step(&saver, &config, 0, "x").await.unwrap();
    sqlx::query("UPDATE checkpoints SET metadata = '{}' WHERE BINARY thread_id = ?")
        .bind(&thread)
        .execute(saver.pool())
        .await
        .unwrap();
    let err = saver.get_tuple(&config).await.expect_err("corrupt metadata");
    saver.delete_thread(&thread).await.unwrap();
    let CheckpointError::Corrupt(message) = &err else { panic!("{err:?}") };
    let id = saved.checkpoint_id.unwrap_or_default();
    assert!(message.contains(&thread) && message.contains(&id), "`{message}` names neither");
}
