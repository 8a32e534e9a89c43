//! Storing checkpoints in the full layout: a chain of checkpoints, each after the pending writes
//! it carries, checked and encoded into [`Rows`], then written in one put transaction (see
//! [`super::transaction`]).

use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::serde::{checkpoint_to_json, dumps_typed, JsonObject};
use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, Commit, ExpectParent,
    WriteBatch,
};
use mnemograph_checkpoint::value::ChannelValue;
use sqlx::MySqlPool;

use super::blobs::Blob;
use super::connections::Writers;
use super::full_rows::Rows;
use super::limits::{check_address, fits, ID_LEN};
use super::pending_writes::prepare_writes;
use super::transaction::{self, Body};
use crate::delta::{self, DeltaState};
use crate::error::{backend, Error};
use crate::fence::Fence;
use crate::keys::ns_hash;
use crate::pyjson;
use crate::texts::Texts;

/// What a full-layout put writes to and updates: the saver's pool and kept connections, and its
/// delta state.
pub(crate) struct PutTarget<'a> {
    /// The pool, for a put that is a single statement.
    pub(crate) pool: &'a MySqlPool,
    /// The connections kept for put transactions.
    pub(crate) writers: &'a Writers,
    /// Delta mode's state; `None` in plain mode.
    pub(crate) delta: Option<&'a DeltaState>,
    /// The condition every put transaction checks, when the saver is fenced.
    pub(crate) fence: Option<&'a Fence>,
}

impl PutTarget<'_> {
    /// A commit: one transaction for the whole chain, except in delta mode, where a chain of
    /// several checkpoints is stored one checkpoint per transaction (each delta is planned on the
    /// value the one before stored). With `parent_texts`, the parent's row must still hold them.
    /// Returns the last checkpoint's address and the texts stored for each link.
    pub(crate) async fn commit(
        &self,
        commit: &Commit,
        parent_texts: Option<&Texts>,
    ) -> Result<(CheckpointConfig, Vec<Texts>), CheckpointError> {
        let links: Vec<Link<'_>> = commit
            .links()
            .map(|(config, link)| Link {
                config,
                writes: link.writes.as_ref(),
                checkpoint: &link.checkpoint,
                metadata: &link.metadata,
                new_versions: &link.new_versions,
            })
            .collect();
        let expect_latest = commit.expect == ExpectParent::Latest;
        let texts = if self.delta.is_some() && links.len() > 1 {
            let mut texts = Vec::with_capacity(links.len());
            for (i, link) in links.into_iter().enumerate() {
                let parent = if i == 0 { parent_texts } else { None };
                texts.extend(self.put_links(&[link], expect_latest || i > 0, parent).await?);
            }
            texts
        } else {
            self.put_links(&links, expect_latest, parent_texts).await?
        };
        Ok((commit.last(), texts))
    }

    /// Stores `links` in order, each the child of the one before, in one transaction that first
    /// checks the first one's parent when `expect_latest` (see [`super::parent_check`]; with
    /// `parent_texts`, also that its row holds them), then stores each link's pending writes,
    /// blobs and checkpoint row. Returns the texts stored for each link.
    async fn put_links(
        &self,
        links: &[Link<'_>],
        expect_latest: bool,
        parent_texts: Option<&Texts>,
    ) -> Result<Vec<Texts>, CheckpointError> {
        let Some(first) = links.first() else {
            return Err(CheckpointError::empty_chain());
        };
        let mut encoded = Vec::with_capacity(links.len());
        for link in links {
            check_address(&link.config)?;
            fits("checkpoint_id", &link.checkpoint.id, ID_LEN)?;
            for channel in link.checkpoint.channel_versions.keys() {
                // JSON_TABLE reads channel names as VARCHAR(150): a longer name would never find
                // its blob again.
                fits("channel", channel, ID_LEN)?;
            }
            encoded.push(checkpoint_to_json(link.checkpoint).map_err(Error::from)?);
        }
        let mut all = Vec::with_capacity(links.len());
        for (link, (document, values)) in links.iter().zip(&encoded) {
            all.push(self.rows(link, document, values)?);
        }
        let single = all.len() == 1 && all[0].writes.is_none() && all[0].blobs.is_empty();
        let stored = if !expect_latest && single && all[0].planned.is_empty() && self.fence.is_none() {
            // A single statement is its own transaction: skip BEGIN/COMMIT and their round trips.
            all[0].upsert().query().execute(self.pool).await.map_err(backend)?;
            vec![Vec::new()]
        } else {
            let texts = parent_texts.filter(|_| expect_latest);
            transaction::run(self.writers, &first.config, expect_latest, texts, self.fence, Body::Full(&all))
                .await?
        };
        if let Some(delta) = self.delta {
            for (rows, stored) in all.iter().zip(stored) {
                delta.remember(rows.config, &rows.planned, stored);
            }
        }
        Ok(all.iter().map(|rows| Texts::new(&rows.document, &rows.metadata)).collect())
    }

    /// The rows of one link, checked and encoded; `document` and `values` are its checkpoint
    /// split by `checkpoint_to_json`.
    fn rows<'a>(
        &self,
        link: &'a Link<'a>,
        document: &JsonObject,
        values: &'a [(Arc<str>, Arc<str>, ChannelValue)],
    ) -> Result<Rows<'a>, CheckpointError> {
        let config = &link.config;
        // Blobs only for values whose version is new: unchanged channels keep pointing at the
        // row stored for their version by an earlier checkpoint.
        let mut blobs = Vec::new();
        for (channel, _, value) in values {
            if let Some(version) = link.new_versions.get(channel) {
                fits("version", version, ID_LEN)?;
                let (kind, bytes) = dumps_typed(value).map_err(Error::from)?;
                fits("type", &kind, ID_LEN)?;
                blobs.push(Blob { channel, version, kind, bytes });
            }
        }
        // Delta mode: list values of delta channels leave `blobs`, to be stored as deltas or
        // snapshots by `delta::insert`.
        let planned = match self.delta {
            Some(delta) => delta::plan(delta, config, &mut blobs),
            None => Vec::new(),
        };
        let writes = match link.writes {
            Some(batch) => Some(prepare_writes(config, &batch.writes, &batch.task_id, &batch.task_path)?),
            None => None,
        };
        let invalid = |e: serde_json::Error| CheckpointError::Invalid(e.to_string());
        Ok(Rows {
            config,
            hash: ns_hash(&config.checkpoint_ns),
            checkpoint_id: &link.checkpoint.id,
            writes,
            blobs,
            planned,
            document: pyjson::dumps(document).map_err(invalid)?,
            metadata: pyjson::dumps(&link.metadata.to_json()).map_err(invalid)?,
        })
    }
}

/// One checkpoint to store: its parent's address, the writes saved against that parent first,
/// and the checkpoint.
struct Link<'a> {
    /// The parent's address.
    config: CheckpointConfig,
    /// Pending writes of the parent, stored before the checkpoint.
    writes: Option<&'a WriteBatch>,
    /// The checkpoint.
    checkpoint: &'a Checkpoint,
    /// Its metadata.
    metadata: &'a CheckpointMetadata,
    /// The channels whose values are new in it.
    new_versions: &'a ChannelVersions,
}
