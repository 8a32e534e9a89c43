//! The binary against real MariaDB/MySQL threads written by `MySqlCheckpointer` from a real graph
//! run (database `inspect_test`, unique thread ids).

mod support;

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::Checkpointer;
use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlPoolOptions};
use sqlx::{Connection, MySqlConnection};

use support::*;

/// The database the tests use, on the server of `MYSQL_URL`.
const DATABASE: &str = "inspect_test";

/// `MYSQL_URL` pointed at `database`.
fn url_of(database: &str) -> String {
    let base =
        std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".to_owned());
    let (base, query) = match base.split_once('?') {
        Some((b, q)) => (b.to_owned(), format!("?{q}")),
        None => (base, String::new()),
    };
    let authority = base.find("://").map_or(0, |i| i + 3);
    let path = base[authority..].find('/').map_or(base.len(), |i| authority + i);
    format!("{}/{database}{query}", &base[..path])
}

fn url() -> String {
    url_of(DATABASE)
}

/// A migrated saver on [`DATABASE`], created when missing; `None` when the server is unreachable.
async fn saver() -> Option<MySqlCheckpointer> {
    let connect = MySqlConnection::connect(&url_of("information_schema"));
    let mut conn = match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return unavailable("MySQL", &e.to_string()),
        Err(_) => return unavailable("MySQL", "no answer within 5 s"),
    };
    let create = format!("CREATE DATABASE IF NOT EXISTS `{DATABASE}` CHARACTER SET utf8mb4");
    sqlx::raw_sql(&create).execute(&mut conn).await.expect("CREATE DATABASE");
    conn.close().await.ok();
    let pool = MySqlPoolOptions::new().max_connections(2).connect(&url()).await.expect("connect");
    let saver = MySqlCheckpointer::from_pool(pool);
    saver.setup().await.expect("setup");
    Some(saver)
}

#[tokio::test]
async fn a_real_thread_reads_back_decoded() {
    let Some(saver) = saver().await else { return };
    let thread = unique("mysql");
    let drawing = populate(saver.clone(), &thread).await;
    check_interrupted_thread(&url(), &thread, &drawing);
    resume(saver.clone(), &thread).await;
    check_resumed_thread(&url(), &thread);
    if !keep_threads() {
        saver.delete_thread(&thread).await.expect("delete");
    }
}

#[tokio::test]
async fn corrupt_values_are_shown_next_to_the_rest() {
    let Some(saver) = saver().await else { return };
    let thread = unique("mysql-corrupt");
    populate(saver.clone(), &thread).await;
    // A blob that is not msgpack (0xc1 is msgpack's reserved marker): the saver refuses the
    // checkpoint, the inspector reads the rows itself.
    sqlx::query("UPDATE checkpoint_blobs SET `blob` = x'c1' WHERE thread_id = ? AND channel = 'retrieved'")
        .bind(&thread)
        .execute(saver.pool())
        .await
        .unwrap();
    // An ext type no serializer knows (code 42, payload 0x07), as a Python plugin might write.
    sqlx::query(
        "UPDATE checkpoint_writes SET `blob` = x'91d42a07' WHERE thread_id = ? AND channel = '__interrupt__'",
    )
    .bind(&thread)
    .execute(saver.pool())
    .await
    .unwrap();
    // Read as another process would (the writer answers from what it remembers while the
    // checkpoint row is unchanged).
    let elsewhere = mnemograph_checkpoint_mysql::MySqlCheckpointer::from_pool(saver.pool().clone());
    assert!(elsewhere
        .get_tuple(&mnemograph_checkpoint::checkpoint::CheckpointConfig::thread(&thread))
        .await
        .is_err());

    let cp = inspect_json(&[&url(), "show", &thread]);
    let bad = &cp["channel_values"]["retrieved"]["$undecodable"];
    assert_eq!((bad["type"].as_str(), bad["base64"].as_str()), (Some("msgpack"), Some("wQ==")), "{cp}");
    assert!(bad["error"].as_str().unwrap().contains("0xc1"), "{bad}");
    assert_eq!(cp["channel_values"]["messages"][3]["content"], ANSWER, "the rest still decodes");
    assert_eq!(cp["pending_writes"][0]["value"], serde_json::json!([{"__ext__": 42, "base64": "Bw=="}]));
    let history = inspect_ok(&[&url(), "history", &thread]);
    assert_eq!(steps(&history), [4, 3, 2, 1, 0, -1]);
    assert!(
        line_of(&history, 1).contains("retrieved = <undecodable msgpack: malformed msgpack"),
        "{history}"
    );
    let show = inspect_ok(&[&url(), "show", &thread]);
    assert!(show.contains("\"$undecodable\"") && show.contains(ANSWER), "{show}");
    if !keep_threads() {
        saver.delete_thread(&thread).await.expect("delete");
    }
}
