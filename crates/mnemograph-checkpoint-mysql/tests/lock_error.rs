//! `LockError` tells a deadlock from a lock that is busy by the server's error number, as the
//! saver's retries and the server's queue need: both provoked here on a real server.

mod support;

use std::time::Duration;

use mnemograph_checkpoint_mysql::LockError;
use sqlx::{Connection, MySqlConnection};

/// Two sessions on a fresh database with a table of two rows.
async fn sessions(label: &str) -> Option<(String, MySqlConnection, MySqlConnection)> {
    let (name, _) = support::fresh_database(label).await?;
    let mut a = MySqlConnection::connect_with(&support::options(&name)).await.expect("connect");
    let b = MySqlConnection::connect_with(&support::options(&name)).await.expect("connect");
    sqlx::raw_sql(
        "CREATE TABLE t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB; INSERT INTO t VALUES (1, 0), (2, 0)",
    )
    .execute(&mut a)
    .await
    .expect("table");
    Some((name, a, b))
}

#[tokio::test]
async fn a_row_locked_elsewhere_is_busy_and_a_crossed_pair_of_locks_is_a_deadlock() {
    let Some((name, mut a, mut b)) = sessions("lock_error").await else { return };

    sqlx::raw_sql("BEGIN; SELECT * FROM t WHERE id = 1 FOR UPDATE").execute(&mut a).await.expect("lock 1");
    sqlx::raw_sql("SET SESSION innodb_lock_wait_timeout = 1").execute(&mut b).await.expect("timeout");
    let busy = sqlx::raw_sql("BEGIN; SELECT * FROM t WHERE id = 1 FOR UPDATE").execute(&mut b).await;
    let busy = busy.expect_err("the row is locked by the other session");
    assert_eq!(LockError::of(&busy), Some(LockError::Busy), "{busy}");
    sqlx::raw_sql("ROLLBACK").execute(&mut b).await.expect("rollback");

    // b locks row 2, then each waits for the other's row: InnoDB breaks the cycle.
    sqlx::raw_sql(
        "SET SESSION innodb_lock_wait_timeout = 20; BEGIN; SELECT * FROM t WHERE id = 2 FOR UPDATE",
    )
    .execute(&mut b)
    .await
    .expect("lock 2");
    let waiting = tokio::spawn(async move {
        let result = sqlx::query("UPDATE t SET v = 1 WHERE id = 1").execute(&mut b).await.map(drop);
        (b, result)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let crossing = sqlx::query("UPDATE t SET v = 2 WHERE id = 2").execute(&mut a).await.map(drop);
    let (b, waited) = waiting.await.expect("joined");
    let deadlocked = [crossing, waited].into_iter().filter_map(Result::err).collect::<Vec<_>>();
    assert_eq!(deadlocked.len(), 1, "one of the two is chosen as the victim: {deadlocked:?}");
    assert_eq!(LockError::of(&deadlocked[0]), Some(LockError::Deadlock), "{}", deadlocked[0]);

    let other = sqlx::raw_sql("SELECT * FROM no_such_table").execute(&mut a).await.expect_err("no table");
    assert_eq!(LockError::of(&other), None, "other errors are not lock errors");
    // Open transactions would hold the database's metadata lock against the drop.
    a.close().await.ok();
    b.close().await.ok();
    support::drop_database(&name).await;
}
