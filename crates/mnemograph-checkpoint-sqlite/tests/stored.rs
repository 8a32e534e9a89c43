//! The saver's `StoredView` on a database file, through the shared check of
//! `mnemograph_test::stored_view`: the `messages` value inside a checkpoint's document is
//! replaced by an ext value whose payload is not msgpack, which the saver refuses and the view
//! shows as stored.

mod support;

use mnemograph_checkpoint::checkpoint::serde::{checkpoint_from_msgpack, checkpoint_to_msgpack};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_sqlite::SqliteCheckpointer;
use mnemograph_test::stored_view::damaged_blob_reads_as_stored;

/// LangChain's message ext code (pydantic v2) with the one-byte payload `0xc1`, as `fixext1`.
const DAMAGED: [u8; 3] = [0xd4, 0x05, 0xc1];

#[tokio::test]
async fn a_damaged_blob_is_read_as_stored_next_to_the_rest() {
    let (_path, saver) = support::fresh_saver("stored").await;
    let reader = SqliteCheckpointer::from_pool(saver.pool().clone());
    damaged_blob_reads_as_stored(&saver, &reader, async |thread: &str| {
        let document: Vec<u8> = sqlx::query_scalar("SELECT checkpoint FROM checkpoints WHERE thread_id = ?")
            .bind(thread)
            .fetch_one(saver.pool())
            .await
            .expect("the checkpoint row");
        let mut checkpoint = checkpoint_from_msgpack(&document).expect("a readable document");
        checkpoint
            .channel_values
            .insert("messages".into(), ChannelValue::encoded("msgpack", DAMAGED.to_vec()));
        sqlx::query("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ?")
            .bind(checkpoint_to_msgpack(&checkpoint).expect("encode"))
            .bind(thread)
            .execute(saver.pool())
            .await
            .expect("damage the value");
        DAMAGED.to_vec()
    })
    .await;
}
