//! Values of unchanged channels, carried over from the parent checkpoint.
//!
//! The saver contract lets a caller leave out of `channel_values` a channel whose version did not
//! change (its value is stored for that version already), while LangGraph's SQLite table keeps
//! every value inside each checkpoint's document, which is all Python reads. So before a
//! checkpoint is written, each such channel gets the value its parent holds at the same version.

use mnemograph_checkpoint::checkpoint::serde::checkpoint_from_msgpack;
use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, Commit,
};
use sqlx::SqlitePool;

use crate::error::backend;

/// Fills the links of `commit`, in order: the first from its parent's stored document, each
/// later one from the link before it.
pub(crate) async fn fill(pool: &SqlitePool, commit: &mut Commit) -> Result<(), CheckpointError> {
    let mut parent: Option<Checkpoint> = None;
    for i in 0..commit.chain.len() {
        let missing = left_out(&commit.chain[i].checkpoint, &commit.chain[i].new_versions);
        if !missing.is_empty() && i == 0 {
            parent = stored(pool, &commit.parent).await?;
        }
        if let Some(parent) = parent.as_ref().filter(|_| !missing.is_empty()) {
            let values = &mut commit.chain[i].checkpoint.channel_values;
            for (channel, version) in missing {
                if parent.channel_versions.get(&channel) == Some(&version) {
                    if let Some(value) = parent.channel_values.get(&channel) {
                        values.insert(channel, value.clone());
                    }
                }
            }
        }
        parent = Some(commit.chain[i].checkpoint.clone());
    }
    Ok(())
}

/// The channels of `cp` with a version but no value, whose version is not new, with that version.
fn left_out(cp: &Checkpoint, new_versions: &ChannelVersions) -> Vec<(Arc<str>, Arc<str>)> {
    cp.channel_versions
        .iter()
        .filter(|(channel, _)| {
            !cp.channel_values.contains_key(*channel) && !new_versions.contains_key(channel)
        })
        .map(|(channel, version)| (Arc::clone(channel), Arc::clone(version)))
        .collect()
}

/// The stored checkpoint at `config`, if it names one that exists and decodes.
async fn stored(pool: &SqlitePool, config: &CheckpointConfig) -> Result<Option<Checkpoint>, CheckpointError> {
    let Some(id) = &config.checkpoint_id else { return Ok(None) };
    let row: Option<(Option<Vec<u8>>,)> = sqlx::query_as(
        "SELECT checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? \
         AND type = 'msgpack'",
    )
    .bind(&config.thread_id)
    .bind(&config.checkpoint_ns)
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(backend("put"))?;
    Ok(row.and_then(|(bytes,)| bytes).and_then(|bytes| checkpoint_from_msgpack(&bytes).ok()))
}
