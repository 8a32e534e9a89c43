//! `setup()`: LangGraph's 22 migrations, idempotent, safe to race, and the final schema of
//! LangGraph's MySQL saver. Each test migrates its own fresh database.

mod support;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use sqlx::Row as _;

/// `SELECT v FROM checkpoint_migrations`, ascending.
async fn versions(saver: &MySqlCheckpointer) -> Vec<i64> {
    sqlx::query_scalar("SELECT v FROM checkpoint_migrations ORDER BY v")
        .fetch_all(saver.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn setup_twice_is_a_no_op() {
    let Some((db, saver)) = support::fresh_database("twice").await else { return };
    assert_eq!(saver.setup().await.unwrap(), 22);
    let schema = columns(&saver, &db).await;
    assert_eq!(saver.setup().await.unwrap(), 0);
    assert_eq!(versions(&saver).await, (0..22).collect::<Vec<_>>());
    assert_eq!(columns(&saver, &db).await, schema, "the second setup changed the schema");
    // What the Python `setup()` reads to decide where to start: nothing left after v21.
    let latest: i64 = sqlx::query_scalar("SELECT v FROM checkpoint_migrations ORDER BY v DESC LIMIT 1")
        .fetch_one(saver.pool())
        .await
        .unwrap();
    assert_eq!(latest, 21);
    support::drop_database(&db).await;
}

#[tokio::test]
async fn concurrent_setups_both_succeed() {
    let Some((db, first)) = support::fresh_database("race").await else { return };
    // Separate pools, as separate processes would have.
    let second = support::saver_on(&db).await.unwrap();
    let third = support::saver_on(&db).await.unwrap();
    let (a, b, c) = tokio::join!(first.setup(), second.setup(), third.setup());
    let applied = [a.unwrap(), b.unwrap(), c.unwrap()];
    assert_eq!(applied.iter().sum::<usize>(), 22, "{applied:?}");
    assert!(applied.contains(&22), "one setup does all the work: {applied:?}");
    assert_eq!(versions(&first).await, (0..22).collect::<Vec<_>>());
    support::drop_database(&db).await;
}

#[tokio::test]
async fn setup_resumes_after_an_applied_but_unrecorded_migration() {
    let Some((db, saver)) = support::fresh_database("resume").await else { return };
    saver.setup().await.unwrap();
    // As if the process had died after the DDL of v5.. but before recording them.
    sqlx::query("DELETE FROM checkpoint_migrations WHERE v >= 5").execute(saver.pool()).await.unwrap();
    // v5-8 re-create existing indexes, v15-18 re-add existing columns: accepted as applied.
    assert_eq!(saver.setup().await.unwrap(), 17);
    assert_eq!(versions(&saver).await, (0..22).collect::<Vec<_>>());
    support::drop_database(&db).await;
}

/// `(column, type, nullable, generated)` of the three tables, in column order.
async fn columns(saver: &MySqlCheckpointer, db: &str) -> Vec<(String, String, String, String, String)> {
    let rows = sqlx::query(
        "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, EXTRA FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes') \
         ORDER BY FIELD(TABLE_NAME, 'checkpoints', 'checkpoint_blobs', 'checkpoint_writes'), ORDINAL_POSITION",
    )
    .bind(db)
    .fetch_all(saver.pool())
    .await
    .unwrap();
    let text = |row: &sqlx::mysql::MySqlRow, i: usize| -> String {
        // information_schema columns are typed differently by MySQL and MariaDB; read them raw.
        let raw: Option<Vec<u8>> = row.try_get_unchecked(i).unwrap();
        String::from_utf8(raw.unwrap_or_default()).unwrap()
    };
    rows.iter().map(|r| (text(r, 0), text(r, 1), text(r, 2).to_lowercase(), text(r, 3), text(r, 4))).collect()
}

/// Index name → its columns in order, for one table.
async fn indexes(saver: &MySqlCheckpointer, db: &str, table: &str) -> Vec<(String, String)> {
    let rows = sqlx::query(
        "SELECT INDEX_NAME, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) FROM information_schema.STATISTICS \
         WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? GROUP BY INDEX_NAME",
    )
    .bind(db)
    .bind(table)
    .fetch_all(saver.pool())
    .await
    .unwrap();
    let mut found: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            let raw = |i| String::from_utf8(r.try_get_unchecked::<Vec<u8>, _>(i).unwrap()).unwrap();
            (raw(0), raw(1))
        })
        .collect();
    // Byte order (`PRIMARY` first), whatever the server's collation sorts.
    found.sort();
    found
}

#[tokio::test]
async fn final_schema_matches_langgraph() {
    let Some((db, saver)) = support::fresh_database("schema").await else { return };
    saver.setup().await.unwrap();
    let got = columns(&saver, &db).await;
    // MariaDB implements JSON as LONGTEXT with a JSON_VALID check.
    let json = |t: &str| if t == "longtext" { "json".to_owned() } else { t.to_owned() };
    let got: Vec<(&str, &str, String, &str)> = got
        .iter()
        .map(|(t, c, ty, null, extra)| {
            assert!(!extra.to_lowercase().contains("generated"), "{t}.{c} is still generated: {extra}");
            (t.as_str(), c.as_str(), json(ty), null.as_str())
        })
        .collect();
    let expected = [
        ("checkpoints", "thread_id", "varchar(150)", "NO"),
        ("checkpoints", "checkpoint_ns", "varchar(2000)", "NO"),
        ("checkpoints", "checkpoint_id", "varchar(150)", "NO"),
        ("checkpoints", "parent_checkpoint_id", "varchar(150)", "YES"),
        ("checkpoints", "type", "varchar(150)", "YES"),
        ("checkpoints", "checkpoint", "json", "NO"),
        ("checkpoints", "metadata", "json", "NO"),
        ("checkpoints", "checkpoint_ns_hash", "binary(16)", "NO"),
        ("checkpoint_blobs", "thread_id", "varchar(150)", "NO"),
        ("checkpoint_blobs", "checkpoint_ns", "varchar(2000)", "NO"),
        ("checkpoint_blobs", "channel", "varchar(150)", "NO"),
        ("checkpoint_blobs", "version", "varchar(150)", "NO"),
        ("checkpoint_blobs", "type", "varchar(150)", "NO"),
        ("checkpoint_blobs", "blob", "longblob", "YES"),
        ("checkpoint_blobs", "checkpoint_ns_hash", "binary(16)", "NO"),
        ("checkpoint_writes", "thread_id", "varchar(150)", "NO"),
        ("checkpoint_writes", "checkpoint_ns", "varchar(2000)", "NO"),
        ("checkpoint_writes", "checkpoint_id", "varchar(150)", "NO"),
        ("checkpoint_writes", "task_id", "varchar(150)", "NO"),
        ("checkpoint_writes", "idx", "int(11)", "NO"),
        ("checkpoint_writes", "channel", "varchar(150)", "NO"),
        ("checkpoint_writes", "type", "varchar(150)", "YES"),
        ("checkpoint_writes", "blob", "longblob", "NO"),
        ("checkpoint_writes", "checkpoint_ns_hash", "binary(16)", "NO"),
        ("checkpoint_writes", "task_path", "varchar(2000)", "NO"),
    ];
    // MySQL 8 prints `int`, MariaDB `int(11)`.
    let got: Vec<(&str, &str, String, &str)> = got
        .into_iter()
        .map(|(t, c, ty, n)| (t, c, if ty == "int" { "int(11)".to_owned() } else { ty }, n))
        .collect();
    let expected: Vec<(&str, &str, String, &str)> =
        expected.iter().map(|(t, c, ty, n)| (*t, *c, (*ty).to_owned(), *n)).collect();
    assert_eq!(got, expected);

    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
    };
    assert_eq!(
        indexes(&saver, &db, "checkpoints").await,
        pairs(&[
            ("PRIMARY", "thread_id,checkpoint_ns_hash,checkpoint_id"),
            ("checkpoints_checkpoint_id_idx", "checkpoint_id"),
            ("checkpoints_thread_id_idx", "thread_id"),
        ])
    );
    assert_eq!(
        indexes(&saver, &db, "checkpoint_blobs").await,
        pairs(&[
            ("PRIMARY", "thread_id,checkpoint_ns_hash,channel,version"),
            ("checkpoint_blobs_thread_id_idx", "thread_id")
        ])
    );
    assert_eq!(
        indexes(&saver, &db, "checkpoint_writes").await,
        pairs(&[
            ("PRIMARY", "thread_id,checkpoint_ns_hash,checkpoint_id,task_id,idx"),
            ("checkpoint_writes_thread_id_idx", "thread_id"),
        ])
    );
    support::drop_database(&db).await;
}
