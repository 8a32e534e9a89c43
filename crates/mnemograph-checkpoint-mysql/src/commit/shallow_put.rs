//! Storing a checkpoint in the shallow layout: checked and encoded into [`ShallowRows`], then
//! written in one put transaction (see [`super::transaction`]).

use mnemograph_checkpoint::checkpoint::serde::{checkpoint_to_json, dumps_typed};
use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
};

use super::connections::Writers;
use super::limits::{check_address, fits, ID_LEN};
use super::shallow_rows::ShallowRows;
use super::transaction::{self, Body};
use crate::error::Error;
use crate::keys::ns_hash;
use crate::pyjson;

/// A checkpoint of the shallow saver, checking its parent with `expect_latest`, on `writers`.
pub(crate) async fn put(
    writers: &Writers,
    config: &CheckpointConfig,
    checkpoint: &Checkpoint,
    metadata: &CheckpointMetadata,
    new_versions: &ChannelVersions,
    expect_latest: bool,
) -> Result<(), CheckpointError> {
    check_address(config)?;
    fits("checkpoint_id", &checkpoint.id, ID_LEN)?;
    for channel in checkpoint.channel_versions.keys() {
        fits("channel", channel, ID_LEN)?;
    }
    let (mut document, _) = checkpoint_to_json(checkpoint).map_err(Error::from)?;
    // Every value lives in the blob table here, primitives included, as in LangGraph's
    // shallow saver: the document carries versions only.
    document.remove("channel_values");
    let mut blobs = Vec::with_capacity(new_versions.len());
    for channel in new_versions.keys() {
        // A channel without a value gets LangGraph's `empty` row, which reads back as absent.
        let (kind, bytes) = match checkpoint.channel_values.get(channel) {
            Some(value) => {
                let (kind, bytes) = dumps_typed(value).map_err(Error::from)?;
                (kind, Some(bytes))
            }
            None => ("empty".to_owned(), None),
        };
        fits("type", &kind, ID_LEN)?;
        blobs.push((&**channel, kind, bytes));
    }
    let document = pyjson::dumps(&document).map_err(|e| CheckpointError::Invalid(e.to_string()))?;
    let metadata = pyjson::dumps(&metadata.to_json()).map_err(|e| CheckpointError::Invalid(e.to_string()))?;
    let rows = ShallowRows {
        config,
        hash: ns_hash(&config.checkpoint_ns),
        checkpoint_id: checkpoint.id.as_str(),
        blobs,
        document,
        metadata,
    };
    transaction::run(writers, config, expect_latest, None, None, Body::Shallow(&rows)).await.map(drop)
}
