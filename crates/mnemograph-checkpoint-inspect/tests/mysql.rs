//! The binary against real MariaDB/MySQL threads written by `MySqlCheckpointer` from a real graph
//! run (database `inspect_test`, unique thread ids).

mod support;

use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlPoolOptions};
use sqlx::{Connection, MySqlConnection};

use support::*;

/// The database the tests use, on the server of `MYSQL_URL`.
const DATABASE: &str = "inspect_test";

/// `MYSQL_URL` pointed at `database`.
fn url_of(database: &str) -> String {
    database_url("MYSQL_URL", "mysql://root@127.0.0.1:3306/graph_test", database)
}

fn url() -> String {
    url_of(DATABASE)
}

/// A migrated saver on [`DATABASE`], created when missing; `None` when the server is unreachable.
async fn saver() -> Option<MySqlCheckpointer> {
    let mut conn: MySqlConnection = admin_connection(&url_of("information_schema"), "MySQL").await?;
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
    check_real_thread(saver, &url(), "mysql").await;
}

#[tokio::test]
async fn corrupt_values_are_shown_next_to_the_rest() {
    let Some(saver) = saver().await else { return };
    // Read as another process would (the writer answers from what it remembers while the
    // checkpoint row is unchanged).
    let elsewhere = MySqlCheckpointer::from_pool(saver.pool().clone());
    let pool = saver.pool().clone();
    check_corrupt_sql_thread(saver, &elsewhere, &url(), "mysql-corrupt", async |thread: &str| {
        sqlx::query("UPDATE checkpoint_blobs SET `blob` = x'c1' WHERE thread_id = ? AND channel = 'retrieved'")
            .bind(thread)
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query(
            "UPDATE checkpoint_writes SET `blob` = x'91d42a07' WHERE thread_id = ? AND channel = '__interrupt__'",
        )
        .bind(thread)
        .execute(&pool)
        .await
        .unwrap();
        vec![0xc1]
    })
    .await;
}
