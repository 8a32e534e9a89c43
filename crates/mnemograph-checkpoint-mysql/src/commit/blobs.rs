//! The `checkpoint_blobs` rows of a full-layout put: channel values whose version is new.

use mnemograph_checkpoint::checkpoint::CheckpointConfig;

use super::batches::{batches, MAX_PLACEHOLDERS};
use crate::sql;
use crate::statement::{Bind, Statement};

/// One `checkpoint_blobs` row to insert.
#[derive(Debug)]
pub(crate) struct Blob<'a> {
    /// The channel.
    pub(crate) channel: &'a str,
    /// The version the value belongs to.
    pub(crate) version: &'a str,
    /// Serializer type tag.
    pub(crate) kind: String,
    /// Serialized value.
    pub(crate) bytes: Vec<u8>,
}

/// The statements inserting blob rows, existing `(channel, version)` rows kept: as few as fit.
pub(crate) fn blob_statements<'a>(
    config: &'a CheckpointConfig,
    hash: &[u8; 16],
    blobs: &[&'a Blob<'a>],
) -> Vec<Statement<'a>> {
    batches(blobs, |b| b.bytes.len(), MAX_PLACEHOLDERS / 7)
        .map(|batch| {
            let text = sql::multi_row(sql::INSERT_BLOBS, sql::BLOB_ROW, batch.len(), "");
            let mut statement = Statement::with_capacity(text, 7 * batch.len());
            for blob in batch {
                statement
                    .push(Bind::Text(&config.thread_id))
                    .push(Bind::Text(&config.checkpoint_ns))
                    .push(Bind::Hash(*hash))
                    .push(Bind::Text(blob.channel))
                    .push(Bind::Text(blob.version))
                    .push(Bind::Text(&blob.kind))
                    .push(Bind::Bytes(&blob.bytes));
            }
            statement
        })
        .collect()
}
