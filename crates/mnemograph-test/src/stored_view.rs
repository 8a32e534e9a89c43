//! The check every saver's [`StoredView`] passes: the thread list with its counts and latest
//! record, and a thread whose blob is damaged, read as stored where `get_tuple` refuses it.
//! Each saver's test supplies how a blob is damaged in its storage, and the bytes its view then
//! shows for it.

use mnemograph_core::checkpoint::backend::{checkpoint_id, next_version};
use mnemograph_core::checkpoint::stored::{StoredValue, StoredView};
use mnemograph_core::checkpoint::{Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource};
use mnemograph_core::messages::Message;
use mnemograph_core::value::ChannelValue;

/// The thread the check writes.
pub const THREAD: &str = "t-stored";

/// Writes thread [`THREAD`] through `saver` (a checkpoint with a `messages` blob, and one pending
/// write), lets `damage` overwrite the `messages` value with one the saver refuses (a saver
/// keeping blobs apart stores the single byte `0xc1`, not msgpack) and return the bytes the view
/// should show for it, and checks what `reader` (a saver on the same storage that remembers
/// nothing) shows. The storage must hold no other thread.
///
/// # Panics
/// When the saver or its view misbehaves.
pub async fn damaged_blob_reads_as_stored(
    saver: &dyn StoredView,
    reader: &dyn StoredView,
    damage: impl AsyncFnOnce(&str) -> Vec<u8>,
) {
    let thread = CheckpointConfig::thread(THREAD);
    let version = next_version(Some("0"));
    let mut cp = Checkpoint { v: 4, id: checkpoint_id(0), ..Checkpoint::default() };
    cp.channel_values.insert("messages".into(), ChannelValue::new(vec![Message::human("hi")]));
    cp.channel_versions.insert("messages".into(), version.into());
    let versions = cp.channel_versions.clone();
    let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
    let saved = saver.put(&thread, cp, metadata, versions).await.expect("put");
    let write = ("reply".to_owned(), ChannelValue::new("re: hi".to_owned()));
    saver.put_writes(&saved, vec![write], "task-1", "").await.expect("put_writes");
    let damaged = damage(THREAD).await;

    assert!(reader.get_tuple(&thread).await.is_err(), "the saver refuses the damaged blob");
    let threads = reader.stored_threads(10).await.expect("stored_threads");
    assert_eq!(threads.len(), 1, "{threads:?}");
    assert_eq!(threads[0].thread_id, THREAD);
    assert_eq!((threads[0].checkpoints, threads[0].namespaces), (1, 1));
    assert_eq!(Some(&threads[0].latest_id), saved.checkpoint_id.as_ref());
    assert_eq!(threads[0].latest_record.as_ref().expect("the latest record").metadata["step"], 0);

    let stored = reader.stored_checkpoints(THREAD, "", None, None).await.expect("stored_checkpoints");
    assert_eq!(stored.len(), 1);
    let (channel, value) = &stored[0].blobs[0];
    assert_eq!(channel, "messages");
    assert!(matches!(value, StoredValue::Typed { payload, .. } if payload == &damaged), "{value:?}");
    let w = &stored[0].writes[0];
    assert_eq!((w.task_id.as_str(), w.idx, w.channel.as_deref()), ("task-1", 0, Some("reply")));
    let none = reader.stored_checkpoints(THREAD, "", Some("no-such-id"), None).await.expect("one id");
    assert!(none.is_empty());
}
