//! A checkpoint and pending writes encoded as the arguments of the writing scripts.

use mnemograph_checkpoint::checkpoint::backend::write_index;
use mnemograph_checkpoint::checkpoint::serde as codec;
use mnemograph_checkpoint::checkpoint::{ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata};
use mnemograph_checkpoint::value::ChannelValue;

use crate::error::RedisSaverError;
use crate::keys::Ns;
use crate::record;

/// One checkpoint, as the `PUT_CHAIN` script stores it.
#[derive(Debug)]
pub(crate) struct EncodedCheckpoint {
    /// Its member of the thread's index.
    pub(crate) member: String,
    /// Document, metadata and parent.
    pub(crate) record: Vec<u8>,
    /// The blob fields it reads, space-separated.
    pub(crate) refs: String,
    /// The prefix of the write fields saved against it.
    pub(crate) writes_prefix: String,
    /// Blob field/value pairs new in it.
    pub(crate) blobs: Vec<(String, Vec<u8>)>,
}

/// Encodes `checkpoint`, the child of `config`'s checkpoint; blobs only for `new_versions`
/// (and, in `shallow` mode, only those the checkpoint reads).
pub(crate) fn checkpoint(
    config: &CheckpointConfig,
    checkpoint: &Checkpoint,
    metadata: &CheckpointMetadata,
    new_versions: &ChannelVersions,
    shallow: bool,
) -> Result<EncodedCheckpoint, RedisSaverError> {
    let ns = Ns::new(&config.checkpoint_ns);
    let invalid =
        |e: codec::SerdeError| RedisSaverError::Invalid(format!("cannot serialize checkpoint: {e}"));
    let (doc, values) = codec::checkpoint_to_json(checkpoint).map_err(invalid)?;
    let inline = doc.get("channel_values").and_then(serde_json::Value::as_object);
    let is_inline = |channel: &str| inline.is_some_and(|m| m.contains_key(channel));
    // The blobs this checkpoint reads: every versioned channel whose value is not inline.
    let refs: Vec<String> = checkpoint
        .channel_versions
        .iter()
        .filter(|(channel, _)| !is_inline(channel))
        .map(|(channel, version)| ns.blob_field(channel, version))
        .collect();
    let mut values: std::collections::HashMap<std::sync::Arc<str>, ChannelValue> =
        values.into_iter().map(|(channel, _, value)| (channel, value)).collect();
    let mut blobs: Vec<(String, Vec<u8>)> = Vec::with_capacity(new_versions.len());
    for (channel, version) in new_versions {
        if is_inline(channel) {
            continue;
        }
        let field = ns.blob_field(channel, version);
        // Shallow mode stores nothing the checkpoint does not read: it would never be freed.
        if shallow && !refs.contains(&field) {
            continue;
        }
        let blob = match values.remove(&**channel) {
            Some(value) => {
                let (kind, bytes) = codec::dumps_typed(&value).map_err(invalid)?;
                record::encode_blob(&kind, &bytes)
            }
            None => record::encode_blob(record::EMPTY, b""),
        };
        blobs.push((field, blob));
    }
    Ok(EncodedCheckpoint {
        member: ns.member(&checkpoint.id),
        record: record::encode_record(&doc, metadata, config.checkpoint_id.as_deref()),
        refs: refs.join(" "),
        writes_prefix: ns.writes_prefix(&checkpoint.id),
        blobs,
    })
}

/// One pending write as the scripts take it: field, value, and `1` to replace what is there
/// (special channels) or `0` to keep it.
pub(crate) type EncodedWrite = (String, Vec<u8>, &'static str);

/// Encodes `task_id`'s `writes` against the checkpoint at `config` as field/value/replace
/// triples.
///
/// # Errors
/// [`RedisSaverError::Invalid`] when `config` names no checkpoint, or a value cannot be encoded.
pub(crate) fn writes(
    config: &CheckpointConfig,
    writes: &[(String, ChannelValue)],
    task_id: &str,
    task_path: &str,
) -> Result<Vec<EncodedWrite>, RedisSaverError> {
    let Some(checkpoint_id) = config.checkpoint_id.as_deref() else {
        return Err(RedisSaverError::Invalid("put_writes needs a config with a checkpoint_id".to_owned()));
    };
    let ns = Ns::new(&config.checkpoint_ns);
    let mut out = Vec::with_capacity(writes.len());
    for (position, (channel, value)) in writes.iter().enumerate() {
        let idx = write_index(channel, position);
        let (kind, bytes) = codec::dumps_typed(value)
            .map_err(|e| RedisSaverError::Invalid(format!("cannot serialize write to `{channel}`: {e}")))?;
        // Special channels (negative index) are upserted; a retried task's regular writes must
        // not change what was saved.
        let replace = if idx < 0 { "1" } else { "0" };
        out.push((
            ns.write_field(checkpoint_id, task_id, idx),
            record::encode_write(channel, task_path, &kind, &bytes),
            replace,
        ));
    }
    Ok(out)
}
