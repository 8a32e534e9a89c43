//! What `prune` leaves in the tables beyond what the conformance suite reads back: the blobs only
//! deleted checkpoints named are gone, the kept checkpoint forgets its deleted parent (as
//! LangGraph's saver does), and the kept checkpoint's blobs and writes stay.

mod support;

use mnemograph_checkpoint::checkpoint::{
    CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer, PruneStrategy,
};
use mnemograph_checkpoint::value::ChannelValue;

async fn count(
    saver: &mnemograph_checkpoint_postgres::PostgresCheckpointer,
    table: &str,
    thread: &str,
) -> i64 {
    sqlx::query_scalar(&format!("SELECT count(*) FROM {table} WHERE thread_id = $1"))
        .bind(thread)
        .fetch_one(saver.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn keep_latest_removes_what_only_older_checkpoints_used() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("retention");
    let mut parent = CheckpointConfig::thread(&thread);
    for step in 0..3 {
        let values = [("log", ChannelValue::new(vec![format!("v{step}")]))];
        let (cp, versions) = support::checkpoint(step, &values);
        let metadata = CheckpointMetadata::new(CheckpointSource::Loop, step);
        parent = saver.put(&parent, cp, metadata, versions).await.unwrap();
        saver.put_writes(&parent, vec![("log".into(), ChannelValue::new(vec!["w"]))], "t", "").await.unwrap();
    }
    assert_eq!(
        [count(&saver, "checkpoint_blobs", &thread).await, count(&saver, "checkpoint_writes", &thread).await],
        [3, 3]
    );

    saver.prune(std::slice::from_ref(&thread), PruneStrategy::KeepLatest).await.unwrap();
    assert_eq!(count(&saver, "checkpoints", &thread).await, 1);
    assert_eq!(count(&saver, "checkpoint_blobs", &thread).await, 1, "blobs of deleted checkpoints stay");
    assert_eq!(count(&saver, "checkpoint_writes", &thread).await, 1);
    let kept = saver.get_tuple(&CheckpointConfig::thread(&thread)).await.unwrap().unwrap();
    assert_eq!(kept.config, parent);
    assert_eq!(kept.parent_config, None, "the deleted parent is still named");
    assert_eq!(kept.checkpoint.channel_values["log"].decode::<Vec<String>>().unwrap(), ["v2"]);
    assert_eq!(kept.pending_writes.len(), 1);
    saver.delete_thread(&thread).await.unwrap();
}
