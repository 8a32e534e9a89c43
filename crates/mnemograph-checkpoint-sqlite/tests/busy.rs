//! The busy timeout: a write that cannot get the database's lock within it fails with
//! `Error::Busy`, having changed nothing, instead of waiting without end or failing vaguely.

mod support;

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, Checkpointer, ListOptions};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_sqlite::{connect_options, Error, SqliteCheckpointer, SqlitePoolOptions};
use sqlx::{Connection, SqliteConnection};
use support::{fresh_path, latest_log, put_log};

/// The crate's error inside a trait error.
fn ours(err: &CheckpointError) -> &Error {
    let CheckpointError::Backend(source) = err else { panic!("not a backend error: {err:?}") };
    source.downcast_ref::<Error>().expect("this crate's error")
}

#[tokio::test]
async fn a_held_write_lock_ends_in_a_typed_busy_error() {
    let path = fresh_path("busy");
    let target = path.to_str().unwrap();
    let options = connect_options(target).unwrap().busy_timeout(Duration::from_millis(200));
    let saver = SqliteCheckpointer::connect_with(options, SqlitePoolOptions::new()).await.unwrap();
    let thread = CheckpointConfig::thread("t");
    let first = put_log(&saver, &thread, 0, ChannelValue::new(vec!["first"])).await.unwrap();

    // Another connection, as another process would, takes the write lock and keeps it.
    let mut holder = SqliteConnection::connect_with(&connect_options(target).unwrap()).await.unwrap();
    sqlx::raw_sql("BEGIN IMMEDIATE").execute(&mut holder).await.unwrap();

    // A guard against a hang only: the writes must fail on their own, long before it.
    let guard = Duration::from_secs(60);
    let put = tokio::time::timeout(guard, put_log(&saver, &first, 1, ChannelValue::new(vec!["second"])));
    let err = put.await.expect("the put gave up instead of waiting on").expect_err("the lock is held");
    assert!(matches!(ours(&err), Error::Busy { operation: "put", .. }), "{err:?}");
    assert!(ours(&err).is_busy());
    let writes = vec![("log".to_owned(), ChannelValue::new(vec!["w"]))];
    let put_writes = tokio::time::timeout(guard, saver.put_writes(&first, writes.clone(), "task", ""));
    let err = put_writes.await.expect("put_writes gave up").expect_err("the lock is held");
    assert!(matches!(ours(&err), Error::Busy { operation: "put_writes", .. }), "{err:?}");
    let delete = tokio::time::timeout(guard, saver.delete_thread("t")).await.expect("delete gave up");
    assert!(ours(&delete.expect_err("the lock is held")).is_busy());

    // Opening the set-up database only reads it, so a new saver opens while the lock is held.
    let opened =
        tokio::time::timeout(guard, SqliteCheckpointer::connect(target)).await.expect("open gave up");
    assert_eq!(latest_log(&opened.expect("open while another writes"), &thread).await, ["first"]);

    // Readers are not blocked by a writer in WAL mode, and nothing was half-written.
    assert_eq!(latest_log(&saver, &thread).await, ["first"]);
    let tuple = saver.get_tuple(&first).await.unwrap().unwrap();
    assert!(tuple.pending_writes.is_empty());

    // Once the lock is released, the same calls succeed.
    sqlx::raw_sql("ROLLBACK").execute(&mut holder).await.unwrap();
    let second = put_log(&saver, &first, 1, ChannelValue::new(vec!["second"])).await.unwrap();
    saver.put_writes(&second, writes, "task", "").await.unwrap();
    assert_eq!(latest_log(&saver, &thread).await, ["second"]);
    assert_eq!(saver.list(Some(&thread), ListOptions::new()).await.unwrap().len(), 2);
}
