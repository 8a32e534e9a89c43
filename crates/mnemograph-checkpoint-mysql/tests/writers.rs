//! Concurrent writers of commits expecting the latest parent: many new threads at once must not lock each
//! other out, two writers of one thread must serialize, and a writer cancelled while it waits
//! must not leave the thread locked. Concurrent copies of threads must all go through too.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_checkpoint::checkpoint::{
    ChainLink, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource, Checkpointer, Commit,
    ExpectParent, ListOptions,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use sqlx::{Connection, MySqlConnection};
use tokio::task::JoinSet;

/// Stores checkpoint `step` of `at`'s thread after `at`'s checkpoint, expecting that one to be
/// the latest.
async fn put_next(
    saver: &MySqlCheckpointer,
    at: &CheckpointConfig,
    step: i64,
) -> Result<CheckpointConfig, CheckpointError> {
    let (cp, new_versions) =
        support::checkpoint(step, &[("n", ChannelValue::new(vec![step.to_string(); 4]))]);
    let meta = CheckpointMetadata::new(CheckpointSource::Loop, step);
    let link = ChainLink::new(cp, meta, new_versions);
    saver.commit(Commit::new(at.clone(), vec![link], ExpectParent::Latest)).await
}

/// The first checkpoints of a hundred threads whose ids sort next to each other, written at
/// once: the parent check must not take gap locks that deadlock neighbouring inserts, so every
/// write goes through.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn first_checkpoints_of_adjacent_threads_at_once_all_commit() {
    let Some(saver) = support::saver().await else { return };
    let saver = Arc::new(saver);
    let run = support::unique("adjacent");
    let mut writers = JoinSet::new();
    for t in 0..100 {
        let saver = Arc::clone(&saver);
        let thread = format!("{run}-{t}");
        writers.spawn(async move {
            let mut at = CheckpointConfig::thread(thread.clone());
            for step in -1..4 {
                at = put_next(&saver, &at, step).await.map_err(|e| format!("{thread} step {step}: {e:?}"))?;
            }
            Ok::<_, String>(thread)
        });
    }
    let mut threads = Vec::new();
    while let Some(joined) = writers.join_next().await {
        threads.push(joined.expect("writer panicked").expect("every write commits"));
    }
    for thread in &threads {
        let history = saver
            .list(Some(&CheckpointConfig::thread(thread.clone())), ListOptions::default())
            .await
            .unwrap();
        assert_eq!(history.len(), 5, "{thread}");
        saver.delete_thread(thread).await.unwrap();
    }
}

/// Two writers of one new thread, both expecting it to be empty: exactly one commits and the
/// other is told who won.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_first_writers_of_one_thread_one_conflicts() {
    let Some(saver) = support::saver().await else { return };
    let saver = Arc::new(saver);
    for round in 0..20 {
        let thread = support::unique(&format!("race-{round}"));
        let empty = CheckpointConfig::thread(thread.clone());
        let (a, b) = tokio::join!(put_next(&saver, &empty, -1), put_next(&saver, &empty, -1));
        let (won, lost) = match (a, b) {
            (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => (won, lost),
            other => panic!("round {round}: expected one commit and one conflict, got {other:?}"),
        };
        match lost {
            CheckpointError::Conflict { found, .. } => assert_eq!(found, won.checkpoint_id, "round {round}"),
            other => panic!("round {round}: {other:?}"),
        }
        saver.delete_thread(&thread).await.unwrap();
    }
}

/// A first writer cancelled while it waits for another one's lock leaves nothing held: once
/// the other lets go, the next writer goes through at once instead of waiting out the timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_first_writer_leaves_the_thread_unlocked() {
    let Some(saver) = support::saver().await else { return };
    let saver = Arc::new(saver);
    let thread = support::unique("cancelled");
    let empty = CheckpointConfig::thread(thread.clone());

    // Another process's writer holds the thread's lock (the same name the saver computes).
    let mut other =
        MySqlConnection::connect_with(&support::options(&support::default_database())).await.unwrap();
    let held: i64 = sqlx::query_scalar(
        "SELECT GET_LOCK(CONCAT('graph-rs:first:', MD5(CONCAT_WS(0x00, DATABASE(), ?, ?))), 5)",
    )
    .bind(&thread)
    .bind("")
    .fetch_one(&mut other)
    .await
    .unwrap();
    assert_eq!(held, 1);

    let waiting = tokio::spawn({
        let (saver, empty) = (Arc::clone(&saver), empty.clone());
        async move { put_next(&saver, &empty, -1).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the writer must wait for the lock");
    waiting.abort();
    assert!(waiting.await.unwrap_err().is_cancelled());

    sqlx::query("DO RELEASE_ALL_LOCKS()").execute(&mut other).await.unwrap();
    other.close().await.unwrap();
    let begun = Instant::now();
    let stored = put_next(&saver, &empty, -1).await.expect("the thread is not locked any more");
    assert!(
        begun.elapsed() < Duration::from_secs(10),
        "waited {:?} for a lock nobody should hold",
        begun.elapsed()
    );
    let latest = saver.get_tuple(&empty).await.unwrap().expect("stored");
    assert_eq!(latest.config.checkpoint_id, stored.checkpoint_id);
    saver.delete_thread(&thread).await.unwrap();
}

/// A writer cancelled inside its transaction, while it waits for the parent's row lock, leaves
/// no transaction behind: its connection is closed rather than pooled, so once the lock it
/// waited for is granted and the server finds the client gone, the transaction ends and the
/// parent is free again. (A pooled connection would keep the granted lock for as long as it sat
/// idle, and the thread's next writer would wait it out.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_cancelled_inside_its_transaction_leaves_no_lock_behind() {
    let Some(saver) = support::saver().await else { return };
    let saver = Arc::new(saver);
    let thread = support::unique("cancelled-tx");
    let parent = put_next(&saver, &CheckpointConfig::thread(thread.clone()), -1).await.unwrap();
    let parent_id = parent.checkpoint_id.clone().unwrap();
    const LOCK_ROW: &str = "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? \
        AND checkpoint_ns_hash = UNHEX(MD5('')) AND checkpoint_id = ? FOR UPDATE";

    // Another session holds the parent's row lock.
    let options = support::options(&support::default_database());
    let mut other = MySqlConnection::connect_with(&options).await.unwrap();
    sqlx::query("BEGIN").execute(&mut other).await.unwrap();
    let locked = sqlx::query(LOCK_ROW).bind(&thread).bind(&parent_id).fetch_all(&mut other).await.unwrap();
    assert_eq!(locked.len(), 1);

    let waiting = tokio::spawn({
        let (saver, parent) = (Arc::clone(&saver), parent.clone());
        async move { put_next(&saver, &parent, 0).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the writer must wait for the parent's lock");
    waiting.abort();
    assert!(waiting.await.unwrap_err().is_cancelled());
    sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();

    // The cancelled writer's session gets the lock now; it must let go of it by itself.
    let begun = Instant::now();
    loop {
        sqlx::query("BEGIN").execute(&mut other).await.unwrap();
        let free = sqlx::query(&format!("{LOCK_ROW} NOWAIT"))
            .bind(&thread)
            .bind(&parent_id)
            .fetch_all(&mut other)
            .await
            .is_ok();
        sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
        if free {
            break;
        }
        assert!(begun.elapsed() < Duration::from_secs(10), "the parent's row is still locked");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    other.close().await.unwrap();
    let stored = put_next(&saver, &parent, 0).await.expect("the parent is free");
    let latest = saver.get_tuple(&CheckpointConfig::thread(thread.clone())).await.unwrap().expect("stored");
    assert_eq!(latest.config.checkpoint_id, stored.checkpoint_id);
    saver.delete_thread(&thread).await.unwrap();
}

/// A writer whose parent another transaction has locked and given a child (not committed yet)
/// waits for that transaction, and then refuses: the new child is the latest. On a kept
/// connection the parent check travels with the `COMMIT` and takes the lock without waiting;
/// finding it held, the put runs again with the check that waits. Without the lock it would
/// commit a second child at once, a fork.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_waits_for_a_locked_parent_and_refuses_its_new_child() {
    // A database of its own: the other session writes rows by hand, which a failed run must not
    // leave among the shared database's threads.
    let Some((name, saver)) = support::fresh_database("locked_parent").await else { return };
    saver.setup().await.unwrap();
    let saver = Arc::new(saver);
    let thread = support::unique("locked-parent");
    let parent = put_next(&saver, &CheckpointConfig::thread(thread.clone()), -1).await.unwrap();
    let parent_id = parent.checkpoint_id.clone().unwrap();
    // Warm a kept connection, so that the racing put below takes the deferred check.
    let sibling = support::unique("locked-parent-warm");
    let warm = put_next(&saver, &CheckpointConfig::thread(sibling.clone()), -1).await.unwrap();
    put_next(&saver, &warm, 0).await.unwrap();

    // Another session locks the parent and stores a child of it, without committing.
    let child_id = mnemograph_checkpoint::checkpoint::backend::checkpoint_id(0);
    let mut other = MySqlConnection::connect_with(&support::options(&name)).await.unwrap();
    sqlx::query("BEGIN").execute(&mut other).await.unwrap();
    sqlx::query(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5('')) \
         AND checkpoint_id = ? FOR UPDATE",
    )
    .bind(&thread)
    .bind(&parent_id)
    .fetch_all(&mut other)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_ns_hash, checkpoint_id, \
         parent_checkpoint_id, checkpoint, metadata) SELECT thread_id, checkpoint_ns, checkpoint_ns_hash, ?, \
         checkpoint_id, JSON_SET(checkpoint, '$.id', ?), metadata FROM checkpoints \
         WHERE thread_id = ? AND checkpoint_id = ?",
    )
    .bind(&child_id)
    .bind(&child_id)
    .bind(&thread)
    .bind(&parent_id)
    .execute(&mut other)
    .await
    .unwrap();

    let racing = tokio::spawn({
        let (saver, parent) = (Arc::clone(&saver), parent.clone());
        async move { put_next(&saver, &parent, 0).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!racing.is_finished(), "the writer must wait for the parent's lock");
    sqlx::query("COMMIT").execute(&mut other).await.unwrap();
    other.close().await.unwrap();

    match racing.await.unwrap() {
        Err(CheckpointError::Conflict { expected, found, .. }) => {
            assert_eq!(expected.as_deref(), Some(parent_id.as_str()));
            assert_eq!(found.as_deref(), Some(child_id.as_str()));
        }
        other => panic!("expected a conflict naming the new child, got {other:?}"),
    }
    let history =
        saver.list(Some(&CheckpointConfig::thread(thread.clone())), ListOptions::new()).await.unwrap();
    assert_eq!(history.len(), 2, "the parent and the other session's child, no fork");
    drop(saver);
    support::drop_database(&name).await;
}

/// Copies of many threads at once, each to a new id next to the others' (as a server's fresh
/// UUIDv7s are): the copies' gap locks may deadlock, and every copy must still go through.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn copies_of_threads_to_adjacent_new_ids_at_once_all_succeed() {
    let Some(saver) = support::saver().await else { return };
    let saver = Arc::new(saver);
    let run = support::unique("copies");
    for t in 0..16 {
        put_next(&saver, &CheckpointConfig::thread(format!("{run}-source-{t}")), -1).await.unwrap();
    }
    let mut copies = JoinSet::new();
    for t in 0..16 {
        let saver = Arc::clone(&saver);
        let (source, target) = (format!("{run}-source-{t}"), format!("{run}-target-{t}"));
        copies.spawn(async move {
            saver.copy_thread(&source, &target).await.map_err(|e| format!("{source}: {e:?}"))?;
            Ok::<_, String>([source, target])
        });
    }
    while let Some(joined) = copies.join_next().await {
        for thread in joined.expect("copy panicked").expect("every copy succeeds") {
            let copied = saver.get_tuple(&CheckpointConfig::thread(thread.clone())).await.unwrap();
            assert!(copied.is_some(), "{thread}");
            saver.delete_thread(&thread).await.unwrap();
        }
    }
}
