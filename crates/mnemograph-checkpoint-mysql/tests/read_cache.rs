//! The saver's memory of the checkpoints it stored last (`with_read_cache`): a read answered
//! from it must be the read the server would give, and whatever another process changed must be
//! read from the server.

mod support;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, Checkpointer};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::prelude::*;
use mnemograph_test::echo::{echo_chat, say, tuple_view};

/// A second saver on the same database with nothing remembered: what another process reads.
fn elsewhere(saver: &MySqlCheckpointer) -> MySqlCheckpointer {
    MySqlCheckpointer::from_pool(saver.pool().clone())
}

#[tokio::test]
async fn a_remembered_read_equals_the_full_read() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("cache-equal");
    let config = RunConfig::thread(&thread);
    let g = echo_chat(saver.clone());
    for text in ["one", "two 二", "three"] {
        g.invoke(say(text), &config).await.unwrap();
    }
    let at = CheckpointConfig::thread(&thread);
    let remembered = saver.get_tuple(&at).await.unwrap().expect("latest");
    let full = elsewhere(&saver).get_tuple(&at).await.unwrap().expect("latest");
    assert_eq!(tuple_view(&remembered), tuple_view(&full));
    // By id too.
    let by_id = at.clone().with_checkpoint_id(remembered.checkpoint.id.clone());
    assert_eq!(tuple_view(&saver.get_tuple(&by_id).await.unwrap().unwrap()), tuple_view(&full));
    saver.delete_thread(&thread).await.unwrap();
}

#[tokio::test]
async fn a_checkpoint_another_process_wrote_is_read_from_the_server() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("cache-other");
    let config = RunConfig::thread(&thread);
    echo_chat(saver.clone()).invoke(say("mine"), &config).await.unwrap();
    echo_chat(elsewhere(&saver)).invoke(say("theirs"), &config).await.unwrap();
    let state = echo_chat(saver.clone()).get_state(&config).await.unwrap();
    let texts: Vec<String> = state.values.messages.iter().map(Message::text).collect();
    assert_eq!(texts, ["mine", "echo: mine", "theirs", "echo: theirs"]);
    // And this saver continues on top of it.
    echo_chat(saver.clone()).invoke(say("again"), &config).await.unwrap();
    let full = elsewhere(&saver).get_tuple(&CheckpointConfig::thread(&thread)).await.unwrap().unwrap();
    assert_eq!(full.checkpoint.channel_values["messages"].decode::<Vec<Message>>().unwrap().len(), 6);
    saver.delete_thread(&thread).await.unwrap();
}

#[tokio::test]
async fn pending_writes_another_process_saved_are_seen() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("cache-writes");
    echo_chat(saver.clone()).invoke(say("x"), &RunConfig::thread(&thread)).await.unwrap();
    let at = CheckpointConfig::thread(&thread);
    let latest = saver.get_tuple(&at).await.unwrap().unwrap();
    assert!(latest.pending_writes.is_empty());
    let write =
        ("messages".to_owned(), mnemograph_checkpoint::value::ChannelValue::new(vec![Message::human("w")]));
    elsewhere(&saver).put_writes(&latest.config, vec![write], "their-task", "").await.unwrap();
    let again = saver.get_tuple(&at).await.unwrap().unwrap();
    assert_eq!(again.checkpoint.id, latest.checkpoint.id);
    assert_eq!(tuple_view(&again), tuple_view(&elsewhere(&saver).get_tuple(&at).await.unwrap().unwrap()));
    assert_eq!(again.pending_writes.len(), 1);
    saver.delete_thread(&thread).await.unwrap();
}

#[tokio::test]
async fn a_thread_deleted_or_edited_elsewhere_is_read_from_the_server() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("cache-gone");
    let at = CheckpointConfig::thread(&thread);
    echo_chat(saver.clone()).invoke(say("x"), &RunConfig::thread(&thread)).await.unwrap();
    // Edited by hand: the metadata row changes under the same id.
    sqlx::query(
        "UPDATE checkpoints SET metadata = JSON_SET(metadata, '$.note', 'edited') WHERE BINARY thread_id = ?",
    )
    .bind(&thread)
    .execute(saver.pool())
    .await
    .unwrap();
    let edited = saver.get_tuple(&at).await.unwrap().unwrap();
    assert_eq!(edited.metadata.extra.get("note"), Some(&serde_json::json!("edited")));
    elsewhere(&saver).delete_thread(&thread).await.unwrap();
    assert!(saver.get_tuple(&at).await.unwrap().is_none(), "deleted elsewhere, yet read from memory");
}

#[tokio::test]
async fn a_saver_without_the_cache_reads_the_same() {
    let Some(saver) = support::saver().await else { return };
    let saver = saver.with_read_cache(0);
    let thread = support::unique("cache-off");
    let config = RunConfig::thread(&thread);
    let g = echo_chat(saver.clone());
    g.invoke(say("a"), &config).await.unwrap();
    g.invoke(say("b"), &config).await.unwrap();
    let state = g.get_state(&config).await.unwrap();
    assert_eq!(state.values.messages.len(), 4);
    saver.delete_thread(&thread).await.unwrap();
}

/// The remembered read is really taken: with a blob damaged behind the saver's back (the row of
/// the checkpoint untouched), the saver that wrote it still answers from memory, while another
/// process reads the damage. (On MySQL 8, which re-renders stored JSON, every read is a full
/// one, so this holds on MariaDB only.)
#[tokio::test]
async fn the_writer_answers_from_memory_while_the_row_is_unchanged() {
    let Some(saver) = support::saver().await else { return };
    let version: String = sqlx::query_scalar("SELECT VERSION()").fetch_one(saver.pool()).await.unwrap();
    if !version.contains("MariaDB") {
        eprintln!("SKIPPED: {version} re-renders JSON documents; the memory is never used there");
        return;
    }
    let thread = support::unique("cache-hit");
    let at = CheckpointConfig::thread(&thread);
    echo_chat(saver.clone()).invoke(say("x"), &RunConfig::thread(&thread)).await.unwrap();
    sqlx::query(
        "UPDATE checkpoint_blobs SET `blob` = X'c1' WHERE BINARY thread_id = ? AND channel = 'messages'",
    )
    .bind(&thread)
    .execute(saver.pool())
    .await
    .unwrap();
    let remembered = saver.get_tuple(&at).await.unwrap().expect("from memory");
    assert_eq!(remembered.checkpoint.channel_values["messages"].decode::<Vec<Message>>().unwrap().len(), 2);
    assert!(elsewhere(&saver).get_tuple(&at).await.is_err(), "another process reads the damaged blob");
    saver.delete_thread(&thread).await.unwrap();
}
