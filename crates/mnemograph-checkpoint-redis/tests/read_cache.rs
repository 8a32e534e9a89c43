//! The saver's memory of the checkpoints it stored last (`read_cache`): a read answered from it
//! must be the read the server would give, and whatever another process changed must be read
//! from the server. Needs a Redis server (see `support`); skips without one outside CI.

mod support;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, Checkpointer};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_redis::{RedisCheckpointer, RedisCheckpointerBuilder};
use mnemograph_core::prelude::*;
use mnemograph_test::echo::{echo_chat, say, tuple_view};
use redis::AsyncCommands as _;
use support::{raw, saver_with, thread};

/// A saver with the default settings, and a second one on the same server with nothing
/// remembered: what another process reads.
async fn savers() -> Option<(RedisCheckpointer, RedisCheckpointer)> {
    let mine = saver_with(RedisCheckpointer::builder()).await?;
    let theirs = saver_with(RedisCheckpointer::builder().read_cache(0)).await?;
    Some((mine, theirs))
}

/// Overwrites every stored value of `thread` with bytes that decode to nothing.
async fn damage_blobs(saver: &RedisCheckpointer, thread: &str) {
    let keys = saver.thread_keys(thread);
    let mut conn = raw().await;
    let fields: Vec<String> = conn.hkeys(&keys.blobs).await.unwrap();
    assert!(!fields.is_empty(), "the thread has stored values");
    for field in fields {
        let _: () = conn.hset(&keys.blobs, field, b"\xc1garbage".as_slice()).await.unwrap();
    }
}

#[tokio::test]
async fn a_remembered_read_equals_the_full_read() {
    let Some((saver, other)) = savers().await else { return };
    let thread = thread("cache-equal");
    let config = RunConfig::thread(&thread);
    let g = echo_chat(saver.clone());
    for text in ["one", "two 二", "three"] {
        g.invoke(say(text), &config).await.unwrap();
    }
    let at = CheckpointConfig::thread(&thread);
    let remembered = saver.get_tuple(&at).await.unwrap().expect("latest");
    let full = other.get_tuple(&at).await.unwrap().expect("latest");
    assert_eq!(tuple_view(&remembered), tuple_view(&full));
    let by_id = at.clone().with_checkpoint_id(remembered.checkpoint.id.clone());
    assert_eq!(tuple_view(&saver.get_tuple(&by_id).await.unwrap().unwrap()), tuple_view(&full));
    saver.delete_thread(&thread).await.unwrap();
}

/// The remembered read is really taken: with the values damaged behind the saver's back (the
/// record untouched), the saver that wrote them still answers from memory, while another process
/// reads the damage. Clones share the memory.
#[tokio::test]
async fn the_writer_answers_from_memory_while_the_record_is_unchanged() {
    let Some((saver, other)) = savers().await else { return };
    let thread = thread("cache-hit");
    let at = CheckpointConfig::thread(&thread);
    let g = echo_chat(saver.clone());
    for text in ["x", "y", "z"] {
        g.invoke(say(text), &RunConfig::thread(&thread)).await.unwrap();
    }
    damage_blobs(&saver, &thread).await;
    let remembered = saver.clone().get_tuple(&at).await.unwrap().expect("from memory");
    assert_eq!(remembered.checkpoint.channel_values["messages"].decode::<Vec<Message>>().unwrap().len(), 6);
    assert!(other.get_tuple(&at).await.is_err(), "another process reads the damaged values");
    saver.delete_thread(&thread).await.unwrap();
}

#[tokio::test]
async fn a_checkpoint_another_process_wrote_is_read_from_the_server() {
    let Some((saver, other)) = savers().await else { return };
    let thread = thread("cache-other");
    let config = RunConfig::thread(&thread);
    echo_chat(saver.clone()).invoke(say("mine"), &config).await.unwrap();
    echo_chat(other.clone()).invoke(say("theirs"), &config).await.unwrap();
    let state = echo_chat(saver.clone()).get_state(&config).await.unwrap();
    let texts: Vec<String> = state.values.messages.iter().map(Message::text).collect();
    assert_eq!(texts, ["mine", "echo: mine", "theirs", "echo: theirs"]);
    echo_chat(saver.clone()).invoke(say("again"), &config).await.unwrap();
    let full = other.get_tuple(&CheckpointConfig::thread(&thread)).await.unwrap().unwrap();
    assert_eq!(full.checkpoint.channel_values["messages"].decode::<Vec<Message>>().unwrap().len(), 6);
    saver.delete_thread(&thread).await.unwrap();
}

#[tokio::test]
async fn pending_writes_another_process_saved_are_seen() {
    let Some((saver, other)) = savers().await else { return };
    let thread = thread("cache-writes");
    echo_chat(saver.clone()).invoke(say("x"), &RunConfig::thread(&thread)).await.unwrap();
    let at = CheckpointConfig::thread(&thread);
    let latest = saver.get_tuple(&at).await.unwrap().unwrap();
    assert!(latest.pending_writes.is_empty());
    let write = ("messages".to_owned(), ChannelValue::new(vec![Message::human("w")]));
    other.put_writes(&latest.config, vec![write], "their-task", "").await.unwrap();
    let again = saver.get_tuple(&at).await.unwrap().unwrap();
    assert_eq!(again.checkpoint.id, latest.checkpoint.id);
    assert_eq!(tuple_view(&again), tuple_view(&other.get_tuple(&at).await.unwrap().unwrap()));
    assert_eq!(again.pending_writes.len(), 1);
    saver.delete_thread(&thread).await.unwrap();
}

#[tokio::test]
async fn a_record_edited_or_a_thread_deleted_elsewhere_is_read_from_the_server() {
    let Some((saver, other)) = savers().await else { return };
    let thread = thread("cache-gone");
    let at = CheckpointConfig::thread(&thread);
    echo_chat(saver.clone()).invoke(say("x"), &RunConfig::thread(&thread)).await.unwrap();
    let latest = other.get_tuple(&at).await.unwrap().unwrap();
    // Another process rewrites the newest checkpoint under the same id, with other metadata.
    let mut metadata = latest.metadata.clone();
    metadata.extra.insert("note".into(), "edited".into());
    let parent = latest.parent_config.clone().expect("has a parent");
    let versions = latest.checkpoint.channel_versions.clone();
    other.put(&parent, latest.checkpoint.clone(), metadata, versions).await.unwrap();
    damage_blobs(&saver, &thread).await;
    // The record changed, so the full read runs (and meets the damage).
    assert!(saver.get_tuple(&at).await.is_err(), "an edited record was answered from memory");
    other.delete_thread(&thread).await.unwrap();
    assert!(saver.get_tuple(&at).await.unwrap().is_none(), "deleted elsewhere, yet read from memory");
}

#[tokio::test]
async fn a_saver_without_the_cache_reads_the_same() {
    let Some(saver) = saver_with(RedisCheckpointerBuilder::default().read_cache(0)).await else { return };
    let thread = thread("cache-off");
    let config = RunConfig::thread(&thread);
    let g = echo_chat(saver.clone());
    g.invoke(say("a"), &config).await.unwrap();
    g.invoke(say("b"), &config).await.unwrap();
    assert_eq!(g.get_state(&config).await.unwrap().values.messages.len(), 4);
    damage_blobs(&saver, &thread).await;
    assert!(saver.get_tuple(&CheckpointConfig::thread(&thread)).await.is_err(), "nothing is remembered");
    saver.delete_thread(&thread).await.unwrap();
}

#[tokio::test]
async fn shallow_mode_answers_from_memory_too() {
    let Some(saver) = saver_with(RedisCheckpointer::builder().shallow(true)).await else { return };
    let other = saver_with(RedisCheckpointer::builder().shallow(true).read_cache(0)).await.unwrap();
    let thread = thread("cache-shallow");
    let config = RunConfig::thread(&thread);
    let g = echo_chat(saver.clone());
    g.invoke(say("a"), &config).await.unwrap();
    g.invoke(say("b"), &config).await.unwrap();
    let at = CheckpointConfig::thread(&thread);
    assert_eq!(
        tuple_view(&saver.get_tuple(&at).await.unwrap().unwrap()),
        tuple_view(&other.get_tuple(&at).await.unwrap().unwrap())
    );
    saver.delete_thread(&thread).await.unwrap();
}
