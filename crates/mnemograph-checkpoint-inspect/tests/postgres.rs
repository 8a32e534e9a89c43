//! The binary against real PostgreSQL threads written by `PostgresCheckpointer` from a real graph
//! run (database `inspect_test`, unique thread ids).

mod support;

use mnemograph_checkpoint_postgres::{PgPoolOptions, PostgresCheckpointer};
use sqlx::{Connection, PgConnection};

use support::*;

/// The database the tests use, on the server of `DATABASE_URL`.
const DATABASE: &str = "inspect_test";

/// `DATABASE_URL` pointed at `database`.
fn url_of(database: &str) -> String {
    database_url("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/graph_test", database)
}

fn url() -> String {
    url_of(DATABASE)
}

/// A migrated saver on [`DATABASE`], created when missing; `None` when the server is unreachable.
async fn saver() -> Option<PostgresCheckpointer> {
    let mut conn: PgConnection = admin_connection(&url_of("postgres"), "PostgreSQL").await?;
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
    check_real_thread(saver, &url(), "postgres").await;
}

#[tokio::test]
async fn corrupt_values_are_shown_next_to_the_rest() {
    let Some(saver) = saver().await else { return };
    // Read as another process would: the writer remembers what it stored (its read cache).
    let (reader, pool) = (PostgresCheckpointer::from_pool(saver.pool().clone()), saver.pool().clone());
    check_corrupt_sql_thread(saver, &reader, &url(), "postgres-corrupt", async |thread: &str| {
        sqlx::query(r"UPDATE checkpoint_blobs SET blob = '\xc1' WHERE thread_id = $1 AND channel = 'retrieved'")
            .bind(thread)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query(
            r"UPDATE checkpoint_writes SET blob = '\x91d42a07' WHERE thread_id = $1 AND channel = '__interrupt__'",
        )
        .bind(thread)
        .execute(&pool)
        .await
        .unwrap();
        vec![0xc1]
    })
    .await;
}
