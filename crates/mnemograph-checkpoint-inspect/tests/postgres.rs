//! The binary against real PostgreSQL threads written by `PostgresCheckpointer` from a real graph
//! run (database `inspect_test`, unique thread ids).

mod support;

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, Checkpointer};
use mnemograph_checkpoint_postgres::{PgPoolOptions, PostgresCheckpointer};
use sqlx::{Connection, PgConnection};

use support::*;

/// The database the tests use, on the server of `DATABASE_URL`.
const DATABASE: &str = "inspect_test";

/// `DATABASE_URL` pointed at `database`.
fn url_of(database: &str) -> String {
    let base = std::env::var("DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/graph_test".to_owned());
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
async fn saver() -> Option<PostgresCheckpointer> {
    let connect = PgConnection::connect(&url_of("postgres"));
    let mut conn = match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return unavailable("PostgreSQL", &e.to_string()),
        Err(_) => return unavailable("PostgreSQL", "no answer within 5 s"),
    };
    let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
        .bind(DATABASE)
        .fetch_one(&mut conn)
        .await
        .expect("pg_database");
    if !exists {
        // Another test may create it at the same moment.
        let _ = sqlx::raw_sql(&format!("CREATE DATABASE \"{DATABASE}\"")).execute(&mut conn).await;
    }
    conn.close().await.ok();
    let pool = PgPoolOptions::new().max_connections(2).connect(&url()).await.expect("connect");
    let saver = PostgresCheckpointer::from_pool(pool);
    saver.setup().await.expect("setup");
    Some(saver)
}

#[tokio::test]
async fn a_real_thread_reads_back_decoded() {
    let Some(saver) = saver().await else { return };
    let thread = unique("postgres");
    let drawing = populate(saver.clone(), &thread).await;
    check_interrupted_thread(&url(), &thread, &drawing);
    resume(saver.clone(), &thread).await;
    check_resumed_thread(&url(), &thread);
    let listed = inspect_json(&[&url(), "threads", "--limit", "1000"]);
    let found = listed.as_array().into_iter().flatten().find(|t| t["thread_id"] == thread.as_str());
    assert!(found.is_some_and(|t| t["checkpoints"].as_u64() > Some(1)), "{listed}");
    if !keep_threads() {
        saver.delete_thread(&thread).await.expect("delete");
    }
}

#[tokio::test]
async fn corrupt_values_are_shown_next_to_the_rest() {
    let Some(saver) = saver().await else { return };
    let thread = unique("postgres-corrupt");
    populate(saver.clone(), &thread).await;
    // A blob that is not msgpack (0xc1 is msgpack's reserved marker): the saver refuses the
    // checkpoint, the inspector reads the rows itself.
    sqlx::query(r"UPDATE checkpoint_blobs SET blob = '\xc1' WHERE thread_id = $1 AND channel = 'retrieved'")
        .bind(&thread)
        .execute(saver.pool())
        .await
        .unwrap();
    // An ext type no serializer knows (code 42, payload 0x07), as a Python plugin might write.
    sqlx::query(r"UPDATE checkpoint_writes SET blob = '\x91d42a07' WHERE thread_id = $1 AND channel = '__interrupt__'")
        .bind(&thread)
        .execute(saver.pool())
        .await
        .unwrap();
    assert!(saver.get_tuple(&CheckpointConfig::thread(&thread)).await.is_err());

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
    if !keep_threads() {
        saver.delete_thread(&thread).await.expect("delete");
    }
}
