//! A long conversation stays bounded in the checkpoint tables: the trimming middleware keeps the
//! latest checkpoint's `messages` blob within the token budget and each round prunes the thread
//! to its newest checkpoints, while the legacy `messages` table keeps every message.
//!
//! `cargo run -p mysql-chat --example turns -- 1000` drives the same conversation for longer and
//! prints the figures the README quotes.

mod support;

use mysql_chat::ThreadFootprint;

/// Rounds driven; the thread is at its bound long before the first measurement after 100.
const TURNS: usize = 300;

#[tokio::test]
async fn a_long_conversation_keeps_a_flat_footprint() {
    let Some(app) = support::start().await else { return };
    let id = support::new_conversation_id();
    let mut measured: Vec<(usize, ThreadFootprint)> = Vec::new();
    for turn in 1..=TURNS {
        let answer = app.chat(&id, &support::turns::message(turn)).await;
        assert!(answer["answer"].as_str().unwrap().contains(&format!("message {turn}:")), "{answer}");
        if [10, 100, TURNS].contains(&turn) {
            measured.push((turn, app.service.footprint(&id).await.unwrap()));
        }
    }
    eprintln!("{measured:#?}");
    let [(_, at_10), (_, at_100), (_, at_last)] = measured[..] else { unreachable!() };

    // Rows: pruned to the newest checkpoints after every round.
    let keep = support::config().keep_checkpoints as u64;
    assert_eq!(at_100.checkpoints, keep);
    assert_eq!(at_last.checkpoints, keep);
    assert!(
        at_last.blobs <= at_100.blobs + 2 && at_last.writes <= at_100.writes + 2,
        "{at_100:?} {at_last:?}"
    );
    // Bytes: flat once trimming holds the conversation at its budget (within a quarter, for
    // the varying lengths of the messages kept); an untrimmed list would triple from 100 to 300.
    assert!(at_10.latest_messages_bytes < at_100.latest_messages_bytes);
    assert!(at_last.latest_messages_bytes * 4 <= at_100.latest_messages_bytes * 5, "{at_100:?} {at_last:?}");
    assert!(at_last.bytes * 4 <= at_100.bytes * 5, "{at_100:?} {at_last:?}");

    // The archive keeps the whole conversation.
    let (_, shown) = app.get(&format!("/api/conversations/{id}/messages")).await;
    assert_eq!(shown["messages"].as_array().unwrap().len(), 2 * TURNS);
}
