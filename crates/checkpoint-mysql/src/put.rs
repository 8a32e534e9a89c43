//! Storing checkpoints in the full layout: a chain of checkpoints, each after the pending writes
//! it carries, checked and encoded, then written in one transaction (see [`latest`]).

use std::borrow::Cow;
use std::sync::Arc;

use graph_core::checkpoint::serde::{checkpoint_to_json, dumps_typed, metadata_to_json, JsonObject};
use graph_core::checkpoint::{
    ChainLink, ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, WriteBatch,
};

use crate::error::{backend, Error};
use crate::saver::MySqlCheckpointer;
use crate::script::{Bind, Statement};
use crate::sql::{self, Layout};
use crate::tx::Tx;
use crate::{delta, latest, pyjson, write};

impl MySqlCheckpointer {
    /// `put`, and with `expect_latest` `put_expecting_latest`: a chain of one.
    pub(crate) async fn put_one(
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
    pub(crate) async fn put_chain_links(
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
    /// checks the first one's parent when `expect_latest` (see [`latest`]), then stores each
    /// link's pending writes, blobs and checkpoint row: `put`, `put_expecting_latest` and
    /// `put_chain`.
    async fn put_links(&self, links: &[Link<'_>], expect_latest: bool) -> Result<(), CheckpointError> {
        let Some(first) = links.first() else {
            return Err(CheckpointError::empty_chain());
        };
        let mut encoded = Vec::with_capacity(links.len());
        for link in links {
            write::check_address(&link.config)?;
            write::fits("checkpoint_id", &link.checkpoint.id, write::ID_LEN)?;
            for channel in link.checkpoint.channel_versions.keys() {
                // JSON_TABLE reads channel names as VARCHAR(150): a longer name would never find
                // its blob again.
                write::fits("channel", channel, write::ID_LEN)?;
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
            all[0].upsert().query().execute(&self.pool).await.map_err(backend)?;
            vec![Vec::new()]
        } else {
            // A parent this saver remembers may be where a run started without reading it back:
            // its row must still be the one stored.
            let parent = expect_latest.then(|| self.recent.parent(&first.config)).flatten();
            let stored = latest::put_transaction(
                &self.writers,
                Layout::Full,
                &first.config,
                expect_latest,
                parent.as_ref().map(|p| &p.fingerprint),
                &all,
                |tx, all| Box::pin(write_all(tx, all)),
            )
            .await;
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
        if let Some(delta) = &self.delta {
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
                write::fits("version", version, write::ID_LEN)?;
                let (kind, bytes) = dumps_typed(value).map_err(Error::from)?;
                write::fits("type", &kind, write::ID_LEN)?;
                blobs.push(write::Blob { channel, version, kind, bytes });
            }
        }
        // Delta mode: list values of delta channels leave `blobs`, to be stored as deltas or
        // snapshots by `delta::insert`.
        let planned = match &self.delta {
            Some(delta) => delta::plan(delta, config, &mut blobs),
            None => Vec::new(),
        };
        let writes = match link.writes {
            Some(batch) => {
                Some(write::prepare_writes(config, &batch.writes, &batch.task_id, &batch.task_path)?)
            }
            None => None,
        };
        let invalid = |e: serde_json::Error| CheckpointError::Invalid(e.to_string());
        Ok(Rows {
            config,
            hash: write::ns_hash(&config.checkpoint_ns),
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

/// Stores every link's rows on `tx`; returns what delta mode stored for each link.
///
/// By kind of row rather than link by link, so that a chain costs a few statements whatever its
/// length: the plain blobs of all links in one multi-row statement, every link's pending writes
/// (each against its own parent), the delta rows link by link (a delta may extend a value an
/// earlier link stored), then all checkpoint rows in one statement. The statements are queued
/// on `tx` and sent with its `COMMIT`, in one round trip; only large ones (a long conversation's
/// messages) and delta rows, whose outcome decides what is remembered, are sent as they come.
async fn write_all(
    tx: &mut Tx,
    all: &[Rows<'_>],
) -> Result<Vec<Vec<Option<delta::Stored>>>, CheckpointError> {
    let Some(first) = all.first() else { return Ok(Vec::new()) };
    // The blobs first: they are the statements large enough to run prepared, and whatever is
    // queued before one is sent ahead of it in a round trip of its own (on a kept connection,
    // autocommit off, a large one runs before the queued parent check instead, which then goes
    // with the COMMIT; nothing the check reads is written by them). The links of a chain are
    // one thread and namespace (each the child of the one before), so the blob rows share their
    // address columns.
    let blobs: Vec<&write::Blob<'_>> = all.iter().flat_map(|rows| &rows.blobs).collect();
    for statement in write::blob_statements(first.config, &first.hash, &blobs) {
        tx.execute_unordered(&statement).await.map_err(backend)?;
    }
    for rows in all {
        if let Some(writes) = &rows.writes {
            write::insert_writes(tx, rows.config, writes).await.map_err(backend)?;
        }
    }
    let mut stored = Vec::with_capacity(all.len());
    for rows in all {
        if rows.planned.is_empty() {
            stored.push(Vec::new());
            continue;
        }
        let conn = tx.connection().await.map_err(backend)?;
        stored.push(delta::insert(conn, rows.config, &rows.hash, &rows.planned).await.map_err(backend)?);
    }
    let size = |rows: &Rows<'_>| rows.document.len() + rows.metadata.len();
    for batch in write::batches(all, size, write::MAX_PLACEHOLDERS / 7) {
        let text = sql::multi_row(
            sql::UPSERT_CHECKPOINTS,
            sql::CHECKPOINT_ROW,
            batch.len(),
            sql::UPSERT_CHECKPOINTS_TAIL,
        );
        tx.execute(&upsert_checkpoints(text, batch)).await.map_err(backend)?;
    }
    Ok(stored)
}

/// `text` (an upsert of `batch.len()` checkpoint rows) with the rows of `batch` bound.
fn upsert_checkpoints<'q>(text: impl Into<Cow<'q, str>>, batch: &'q [Rows<'q>]) -> Statement<'q> {
    let mut statement = Statement::with_capacity(text, 7 * batch.len());
    for rows in batch {
        statement
            .push(Bind::Text(&rows.config.thread_id))
            .push(Bind::Text(&rows.config.checkpoint_ns))
            .push(Bind::Hash(rows.hash))
            .push(Bind::Text(rows.checkpoint_id))
            .push(Bind::OptText(rows.config.checkpoint_id.as_deref()))
            .push(Bind::Text(&rows.document))
            .push(Bind::Text(&rows.metadata));
    }
    statement
}

/// What one put stores, encoded and checked: its blob rows (or deltas) and its checkpoint row.
struct Rows<'a> {
    /// Thread, namespace and parent.
    config: &'a CheckpointConfig,
    /// `checkpoint_ns_hash`.
    hash: [u8; 16],
    /// The checkpoint's id.
    checkpoint_id: &'a str,
    /// Pending writes against the parent, stored first (`put_chain`).
    writes: Option<write::TaskWrites<'a>>,
    /// Values whose version is new, stored in full.
    blobs: Vec<write::Blob<'a>>,
    /// Values of delta channels, stored as deltas or snapshots.
    planned: Vec<delta::Planned<'a>>,
    /// The checkpoint document, as Python's JSON.
    document: String,
    /// The metadata, as Python's JSON.
    metadata: String,
}

impl<'a> Rows<'a> {
    /// The statement that upserts the checkpoint row.
    fn upsert(&'a self) -> Statement<'a> {
        upsert_checkpoints(sql::UPSERT_CHECKPOINT, std::slice::from_ref(self))
    }
}
