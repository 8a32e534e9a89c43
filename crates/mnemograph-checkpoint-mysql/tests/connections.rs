//! The saver's connections: pooled ones pinged only after they sat idle, and the connections kept
//! for put transactions (`write-connections`), reused without a ping and replaced when the server
//! ended them.

mod support;

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::{
    CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use sqlx::Connection as _;

/// Puts a checkpoint at `step` under `at` whose channel `a` holds a new list; returns its address.
async fn put(saver: &MySqlCheckpointer, at: &CheckpointConfig, step: i64) -> CheckpointConfig {
    let value = ChannelValue::new(vec!["x".repeat(step.unsigned_abs() as usize + 3)]);
    let (cp, new_versions) = support::checkpoint(step, &[("a", value)]);
    saver.put(at, cp, CheckpointMetadata::new(CheckpointSource::Loop, step), new_versions).await.expect("put")
}

/// Ends sessions `ids` from an admin session, as a server restart or `wait_timeout` would.
async fn kill(ids: &[i64]) {
    let mut admin =
        sqlx::MySqlConnection::connect_with(&support::options("information_schema")).await.expect("admin");
    for id in ids {
        sqlx::query(&format!("KILL CONNECTION {id}")).execute(&mut admin).await.expect("KILL");
    }
    admin.close().await.ok();
}

/// A connection is pinged before use only after it sat idle (`ping-after-idle`, 1 s by default),
/// not before every statement; one the server ended while idle is then found dead by its ping and
/// replaced, so the next put goes through. Both kinds: the pool's, and the one kept for puts.
#[tokio::test]
async fn connections_killed_while_idle_are_replaced_before_the_next_put() {
    let Some((name, setup)) = support::fresh_database("killed").await else { return };
    setup.setup().await.expect("setup");
    drop(setup);
    let saver =
        MySqlCheckpointer::connect(&support::url_for(&name, "max-connections=2")).await.expect("connect");
    let thread = support::unique("killed");
    let at = CheckpointConfig::thread(thread.clone());
    let first = put(&saver, &at, -1).await;
    // A read, so that the pool holds an idle connection too, beside the kept write connection.
    saver.get_tuple(&at).await.expect("read");

    // The server ends every session on the database, kept and pooled alike.
    let sessions = support::sessions_on(&name).await;
    assert!(sessions.len() >= 2, "a kept and a pooled connection, found sessions {sessions:?}");
    kill(&sessions).await;
    // Longer than the default `ping-after-idle`.
    tokio::time::sleep(Duration::from_millis(1_200)).await;

    let second = put(&saver, &first, 0).await;
    let latest = saver.get_tuple(&at).await.expect("read").expect("stored");
    assert_eq!(latest.config, second);
    drop(saver);
    support::drop_database(&name).await;
}

#[tokio::test]
async fn puts_reuse_a_kept_connection_which_closes_with_the_saver() {
    let Some((name, setup)) = support::fresh_database("kept").await else { return };
    setup.setup().await.expect("setup");
    drop(setup);
    let saver = MySqlCheckpointer::connect(&support::url_for(&name, "max-connections=1&write-connections=1"))
        .await
        .expect("connect");
    let thread = support::unique("kept");
    let mut at = CheckpointConfig::thread(thread.clone());
    at = put(&saver, &at, -1).await;
    saver.get_tuple(&at).await.expect("read");
    let after_first = support::sessions_on(&name).await;
    for step in 0..10 {
        at = put(&saver, &at, step).await;
        // Reads take the pool's one connection, never the kept one.
        assert_eq!(saver.get_tuple(&at).await.expect("read").expect("stored").config, at);
    }
    // The same sessions all along: the put connection was neither closed nor replaced, and the
    // pool opened no second one.
    assert_eq!(support::sessions_on(&name).await, after_first);
    assert_eq!(after_first.len(), 2, "one kept connection and the pool's one: {after_first:?}");

    drop(saver);
    let mut left = support::sessions_on(&name).await;
    for _ in 0..50 {
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        left = support::sessions_on(&name).await;
    }
    assert!(left.is_empty(), "sessions left open after the saver was dropped: {left:?}");
    support::drop_database(&name).await;
}

/// More puts at once than kept connections: they wait for a kept one rather than taking the
/// pool's, so the server sees only the kept sessions (no `BEGIN`, no ping on release).
#[tokio::test]
async fn puts_beyond_the_kept_connections_wait_for_one() {
    let Some((name, setup)) = support::fresh_database("waiting").await else { return };
    setup.setup().await.expect("setup");
    drop(setup);
    let saver = MySqlCheckpointer::connect(&support::url_for(&name, "max-connections=4&write-connections=2"))
        .await
        .expect("connect");
    let threads: Vec<String> = (0..16).map(|k| support::unique(&format!("waiting-{k}"))).collect();
    let puts = threads.iter().map(|thread| {
        let saver = saver.clone();
        let thread = thread.clone();
        async move {
            let mut at = CheckpointConfig::thread(thread);
            for step in -1..3 {
                at = put(&saver, &at, step).await;
            }
            at
        }
    });
    let last = futures_util::future::join_all(puts).await;
    // The two kept connections and nothing else: the pool opened none for the puts.
    let sessions = support::sessions_on(&name).await;
    assert_eq!(sessions.len(), 2, "sessions beside the two kept connections: {sessions:?}");
    for (thread, at) in threads.iter().zip(&last) {
        let read = saver.get_tuple(&CheckpointConfig::thread(thread.clone())).await.expect("read");
        assert_eq!(read.expect("stored").config, *at);
    }
    drop(saver);
    support::drop_database(&name).await;
}

#[tokio::test]
async fn without_kept_connections_puts_use_the_pool() {
    let Some((name, saver)) = support::fresh_database("unkept").await else { return };
    saver.setup().await.expect("setup");
    let saver = saver.with_write_connections(0);
    let thread = support::unique("unkept");
    let mut at = CheckpointConfig::thread(thread.clone());
    for step in -1..3 {
        at = put(&saver, &at, step).await;
    }
    assert_eq!(
        saver.get_tuple(&CheckpointConfig::thread(thread)).await.expect("read").expect("stored").config,
        at
    );
    drop(saver);
    support::drop_database(&name).await;
}
