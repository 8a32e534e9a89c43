//! The saver's `StoredView` against a real PostgreSQL (`DATABASE_URL`), in a fresh database,
//! through the shared check of `mnemograph_test::stored_view`.
//!
//! Without a server the test prints `SKIPPED` and passes, unless `CI` is set.

mod support;

use mnemograph_checkpoint_postgres::PostgresCheckpointer;
use mnemograph_test::stored_view::damaged_blob_reads_as_stored;
use support::{drop_database, fresh_database};

#[tokio::test]
async fn a_damaged_blob_is_read_as_stored_next_to_the_rest() {
    let Some((db, saver)) = fresh_database("stored").await else { return };
    saver.setup().await.expect("setup");
    // Another process's saver: the writer would answer from what it remembers.
    let reader = PostgresCheckpointer::from_pool(saver.pool().clone());
    damaged_blob_reads_as_stored(&saver, &reader, async |thread: &str| {
        sqlx::query(
            "UPDATE checkpoint_blobs SET blob = '\\xc1'::bytea WHERE thread_id = $1 AND channel = 'messages'",
        )
        .bind(thread)
        .execute(saver.pool())
        .await
        .expect("damage the blob");
        vec![0xc1]
    })
    .await;
    drop_database(&db).await;
}
