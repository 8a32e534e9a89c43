//! The read cache: a read of the checkpoint this saver stored last answers as the full read does,
//! and anything another writer did (a newer checkpoint, a row edited in place, new pending
//! writes, a deleted thread) is never hidden. Needs `DATABASE_URL` (skipped without, failed
//! under `CI`).

mod support;

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version, now_iso};
use mnemograph_checkpoint::checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_postgres::PostgresCheckpointer;
use mnemograph_test::echo::tuple_view;

fn thread(label: &str) -> String {
    format!("read-cache-{label}-{}-{}", std::process::id(), uuid_ish())
}

fn uuid_ish() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
}

async fn save(
    saver: &PostgresCheckpointer,
    parent: &CheckpointConfig,
    step: i64,
    log: &[&str],
) -> CheckpointConfig {
    let mut cp = Checkpoint { v: 4, id: checkpoint_id(step), ts: now_iso(), ..Checkpoint::default() };
    cp.channel_values
        .insert("log".into(), ChannelValue::new(log.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()));
    cp.channel_versions.insert("log".into(), next_version(None).into());
    let versions = cp.channel_versions.clone();
    saver.put(parent, cp, CheckpointMetadata::new(CheckpointSource::Loop, step), versions).await.unwrap()
}

/// A saver that caches and one that does not, on the shared test database.
async fn pair() -> Option<(PostgresCheckpointer, PostgresCheckpointer)> {
    let cached = support::saver().await?;
    let full = cached.clone().with_read_cache(0);
    Some((cached, full))
}

#[tokio::test]
async fn a_remembered_checkpoint_reads_as_the_full_read_does() {
    let Some((cached, full)) = pair().await else { return };
    let config = CheckpointConfig::thread(thread("same"));
    let first = save(&cached, &config, 0, &["a"]).await;
    cached
        .put_writes(&first, vec![("log".into(), ChannelValue::new(vec!["w"]))], "task-1", "")
        .await
        .unwrap();
    let second = save(&cached, &first, 1, &["a", "b"]).await;
    cached
        .put_writes(&second, vec![("log".into(), ChannelValue::new(vec!["x"]))], "task-2", "")
        .await
        .unwrap();
    for at in [&config, &second] {
        let ours = cached.get_tuple(at).await.unwrap().expect("stored");
        let reference = full.get_tuple(at).await.unwrap().expect("stored");
        assert_eq!(tuple_view(&ours), tuple_view(&reference));
        assert_eq!(ours.pending_writes.len(), 1, "the writes stored after the commit are read");
    }
}

#[tokio::test]
async fn another_writer_is_never_hidden() {
    let Some((cached, _)) = pair().await else { return };
    let Some(other) = support::saver().await else { return };
    let config = CheckpointConfig::thread(thread("other"));
    let first = save(&cached, &config, 0, &["mine"]).await;
    // A newer checkpoint by another process.
    save(&other, &first, 1, &["mine", "theirs"]).await;
    let latest = cached.get_tuple(&config).await.unwrap().unwrap();
    assert_eq!(latest.checkpoint.channel_values["log"].decode::<Vec<String>>().unwrap(), ["mine", "theirs"]);

    // The remembered row edited in place: same id, other metadata.
    let config = CheckpointConfig::thread(thread("edited"));
    let stored = save(&cached, &config, 0, &["x"]).await;
    sqlx::query("UPDATE checkpoints SET metadata = metadata || '{\"edited\": true}' WHERE thread_id = $1")
        .bind(&config.thread_id)
        .execute(cached.pool())
        .await
        .unwrap();
    let read = cached.get_tuple(&stored).await.unwrap().unwrap();
    assert_eq!(read.metadata.to_json().get("edited"), Some(&serde_json::json!(true)), "{:?}", read.metadata);

    // A thread deleted by another process is gone for this one too.
    other.delete_thread(&config.thread_id).await.unwrap();
    assert!(cached.get_tuple(&config).await.unwrap().is_none());
}
