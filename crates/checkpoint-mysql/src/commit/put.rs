//! Storing checkpoints in the full layout: a chain of checkpoints, each after the pending writes
//! it carries, checked and encoded into [`Rows`], then written in one put transaction (see
//! [`super::transaction`]).

use std::sync::Arc;

use graph_core::checkpoint::serde::{checkpoint_to_json, dumps_typed, metadata_to_json, JsonObject};
use graph_core::checkpoint::{
    ChainLink, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, WriteBatch,
};
use graph_core::value::ChannelValue;
use sqlx::MySqlPool;

use super::blobs::Blob;
use super::connections::Writers;
use super::full_rows::Rows;
use super::limits::{check_address, fits, ID_LEN};
use super::pending_writes::prepare_writes;
use super::transaction::{self, Body};
use crate::delta::{self, DeltaState};
use crate::error::{backend, Error};
use crate::keys::ns_hash;
use crate::pyjson;
use crate::read_cache::Recent;

/// What a full-layout put writes to and updates: the saver's pool and kept connections, its delta
/// state and its read cache.
pub(crate) struct Store<'a> {
    /// The pool, for a put that is a single statement.
    pub(crate) pool: &'a MySqlPool,
    /// The connections kept for put transactions.
    pub(crate) writers: &'a Writers,
    /// Delta mode's state; `None` in plain mode.
    pub(crate) delta: Option<&'a DeltaState>,
    /// The checkpoints stored last, remembered for reading them back.
    pub(crate) recent: &'a Recent,
}

impl Store<'_> {
    /// `put`, and with `expect_latest` `put_expecting_latest`: a chain of one.
    pub(crate) async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
        expect_latest: bool,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let link = Link { config: config.clone(), writes: None, checkpoint, metadata, new_versions };
        self.put_links(&[link], expect_latest).await?;
        Ok(config.clone().with_checkpoint_id(checkpoint.id.clone()))
    }

    /// `put_chain`: one transaction for the whole chain, except in delta mode, where a chain of
    /// several checkpoints is stored one checkpoint per transaction (each delta is planned on the
    /// value the one before stored). Returns the last checkpoint's address.
    pub(crate) async fn put_chain(
        &self,
        config: &CheckpointConfig,
        chain: &[ChainLink],
        expect_latest: bool,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let mut parent = config.clone();
        let mut links = Vec::with_capacity(chain.len());
        for link in chain {
            let next = parent.clone().with_checkpoint_id(link.checkpoint.id.clone());
            links.push(Link {
                config: std::mem::replace(&mut parent, next),
                writes: link.writes.as_ref(),
                checkpoint: &link.checkpoint,
                metadata: &link.metadata,
                new_versions: &link.new_versions,
            });
        }
        if self.delta.is_some() && links.len() > 1 {
            for (i, link) in links.into_iter().enumerate() {
                self.put_links(&[link], expect_latest || i > 0).await?;
            }
        } else {
            self.put_links(&links, expect_latest).await?;
        }
        Ok(parent)
    }

    /// Stores `links` in order, each the child of the one before, in one transaction that first
    /// checks the first one's parent when `expect_latest` (see [`super::parent_check`]), then stores each
    /// link's pending writes, blobs and checkpoint row: `put`, `put_expecting_latest` and
    /// `put_chain`.
    async fn put_links(&self, links: &[Link<'_>], expect_latest: bool) -> Result<(), CheckpointError> {
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
        let stored = if !expect_latest && single && all[0].planned.is_empty() {
            // A single statement is its own transaction: skip BEGIN/COMMIT and their round trips.
            all[0].upsert().query().execute(self.pool).await.map_err(backend)?;
            vec![Vec::new()]
        } else {
            // A parent this saver remembers may be where a run started without reading it back:
            // its row must still be the one stored.
            let parent = expect_latest.then(|| self.recent.parent(&first.config)).flatten();
            let texts = parent.as_ref().map(|p| &p.fingerprint);
            let stored =
                transaction::run(self.writers, &first.config, expect_latest, texts, Body::Full(&all)).await;
            match stored {
                Ok(stored) => stored,
                Err(e) => {
                    if matches!(e, CheckpointError::Conflict { .. }) {
                        // What is remembered of the namespace is not its latest any more.
                        self.recent.forget_thread(&first.config.thread_id);
                    }
                    return Err(e);
                }
            }
        };
        if let Some(delta) = self.delta {
            for (rows, stored) in all.iter().zip(stored) {
                delta.remember(rows.config, &rows.planned, stored);
            }
        }
        // Every link, in order: each link's unchanged channels are known through the one before.
        for (link, rows) in links.iter().zip(&all) {
            self.recent.remember(
                &link.config,
                link.checkpoint,
                link.metadata,
                link.new_versions,
                &rows.document,
                &rows.metadata,
            );
        }
        Ok(())
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
            metadata: pyjson::dumps(&metadata_to_json(link.metadata)).map_err(invalid)?,
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
