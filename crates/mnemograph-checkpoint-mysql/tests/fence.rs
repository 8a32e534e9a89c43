//! A fenced saver: its writes check a condition inside their own transaction, are refused with
//! `CheckpointError::Fenced` when it does not hold, and store nothing then; a change to the
//! fenced row that is not committed yet holds the write back until it is, and the write then sees
//! it.

mod support;

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::{
    ChainLink, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource, Checkpointer, Commit,
    ExpectParent, ListOptions,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_mysql::{Fence, MySqlCheckpointer};
use sqlx::{Connection, MySqlConnection};

/// The claim table of the tests: one row per thread, naming who holds it under which token.
const CLAIMS: &str = "CREATE TABLE claims (thread VARCHAR(64) PRIMARY KEY, holder VARCHAR(64), token BIGINT)";

/// A fence that holds while `holder` holds `thread` under `token`.
fn fence(thread: &str, holder: &str, token: i64) -> Fence {
    Fence::new("SELECT COUNT(*) FROM claims WHERE thread = ? AND holder = ? AND token = ? LOCK IN SHARE MODE")
        .bind(thread)
        .bind(holder)
        .bind_int(token)
}

/// A fresh database with the saver's tables and the claim table, `thread` held by `a` under 1.
async fn claimed(label: &str, thread: &str) -> Option<(String, MySqlCheckpointer, MySqlConnection)> {
    let (name, saver) = support::fresh_database(label).await?;
    saver.setup().await.expect("setup");
    let mut conn = MySqlConnection::connect_with(&support::options(&name)).await.expect("connect");
    sqlx::raw_sql(CLAIMS).execute(&mut conn).await.expect("claims table");
    sqlx::query("INSERT INTO claims VALUES (?, 'a', 1)")
        .bind(thread)
        .execute(&mut conn)
        .await
        .expect("claim");
    Some((name, saver, conn))
}

/// Stores checkpoint `step` after `at`'s, expecting `at`'s to be the latest when `latest`.
async fn put(
    saver: &MySqlCheckpointer,
    at: &CheckpointConfig,
    step: i64,
    latest: bool,
) -> Result<CheckpointConfig, CheckpointError> {
    let (cp, versions) = support::checkpoint(step, &[("n", ChannelValue::new(step))]);
    let link = ChainLink::new(cp, CheckpointMetadata::new(CheckpointSource::Loop, step), versions);
    let expect = if latest { ExpectParent::Latest } else { ExpectParent::Any };
    saver.commit(Commit::new(at.clone(), vec![link], expect)).await
}

/// How many checkpoints `thread` has, and how many pending writes its latest one.
async fn stored(saver: &MySqlCheckpointer, thread: &str) -> (usize, usize) {
    let config = CheckpointConfig::thread(thread);
    let all = saver.list(Some(&config), ListOptions::default()).await.expect("list");
    let writes = all.first().map_or(0, |latest| latest.pending_writes.len());
    (all.len(), writes)
}

/// Writes while the fence holds, then the claim passes to `b`: every later write of the fenced
/// saver is refused and stores nothing, on the saver's kept connections and on the pool's alike,
/// while an unfenced clone still writes.
#[tokio::test]
async fn a_fenced_write_is_stored_while_its_fence_holds_and_refused_after() {
    for kept in [4, 0] {
        let thread = support::unique("fenced");
        let Some((name, saver, mut conn)) = claimed("fence", &thread).await else { return };
        let saver = saver.with_write_connections(kept);
        let fenced = saver.fenced(fence(&thread, "a", 1));

        let first = put(&fenced, &CheckpointConfig::thread(&thread), -1, true).await.expect("held: stored");
        let second = put(&fenced, &first, 0, true).await.expect("held: stored");
        fenced
            .put_writes(&second, vec![("n".into(), ChannelValue::new(7))], "task-1", "")
            .await
            .expect("held: writes stored");
        assert_eq!(stored(&saver, &thread).await, (2, 1));

        sqlx::query("UPDATE claims SET holder = 'b', token = 2 WHERE thread = ?")
            .bind(&thread)
            .execute(&mut conn)
            .await
            .expect("take over");
        for latest in [true, false] {
            let refused = put(&fenced, &second, 1, latest).await;
            assert!(matches!(&refused, Err(e) if e.is_fenced()), "kept {kept}, latest {latest}: {refused:?}");
        }
        let writes = vec![("n".into(), ChannelValue::new(8)), ("m".into(), ChannelValue::new(9))];
        let refused = fenced.put_writes(&second, writes, "task-2", "").await;
        assert!(
            matches!(&refused, Err(CheckpointError::Fenced(why)) if why.contains("FROM claims")),
            "{refused:?}"
        );
        assert_eq!(stored(&saver, &thread).await, (2, 1), "kept {kept}: a refused write stored nothing");

        // The new holder's fence holds, and an unfenced clone is not held back.
        let third = put(&saver.fenced(fence(&thread, "b", 2)), &second, 1, true).await.expect("new holder");
        put(&saver, &third, 2, true).await.expect("unfenced");
        assert_eq!(stored(&saver, &thread).await, (4, 0));
        conn.close().await.ok();
        support::drop_database(&name).await;
    }
}

/// A takeover begun but not committed holds the fenced row: a write checks after it commits and
/// is refused. A fence that read without a lock would see the old holder and store.
#[tokio::test]
async fn a_write_waits_for_an_uncommitted_takeover_and_is_refused_by_it() {
    let thread = support::unique("waits");
    let Some((name, saver, mut conn)) = claimed("fence_wait", &thread).await else { return };
    let fenced = saver.fenced(fence(&thread, "a", 1));
    let first = put(&fenced, &CheckpointConfig::thread(&thread), -1, true).await.expect("held: stored");

    sqlx::raw_sql("BEGIN").execute(&mut conn).await.expect("begin");
    sqlx::query("UPDATE claims SET holder = 'b', token = 2 WHERE thread = ?")
        .bind(&thread)
        .execute(&mut conn)
        .await
        .expect("take over");
    let write = tokio::spawn({
        let fenced = fenced.clone();
        async move { put(&fenced, &first, 0, true).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!write.is_finished(), "the write waits for the takeover's lock");
    sqlx::raw_sql("COMMIT").execute(&mut conn).await.expect("commit");
    let refused = tokio::time::timeout(Duration::from_secs(20), write).await.expect("done").expect("joined");
    assert!(matches!(&refused, Err(e) if e.is_fenced()), "{refused:?}");
    assert_eq!(stored(&saver, &thread).await, (1, 0));
    conn.close().await.ok();
    support::drop_database(&name).await;
}
