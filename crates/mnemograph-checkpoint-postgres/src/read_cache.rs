//! What the read cache ([`ReadCache`](mnemograph_checkpoint::checkpoint::backend::ReadCache))
//! needs of the full saver: the fingerprint each commit stored, and one statement that tells
//! whether a remembered checkpoint is still the one wanted, unchanged, with its pending writes.
//!
//! A run starts by reading the latest checkpoint of its thread, usually the one this process
//! stored at the end of the previous turn. The full read joins and moves every blob of that
//! checkpoint (a long conversation's messages) and decodes them again. With the cache, the read
//! moves the row's id, its fingerprint and its pending writes only.

use mnemograph_checkpoint::checkpoint::backend::Fingerprinted;
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, Commit, PendingWrite};
use sqlx::Row as _;

use crate::commit::{self, fingerprint};
use crate::error::backend;
use crate::select::writes_of_c;
use crate::text::{escape, unescape};
use crate::tuple::pending_writes;
use crate::uncached::Uncached;

/// The namespace's latest checkpoint row, or the one named by `$3` when it is not NULL: its id,
/// fingerprint and pending writes.
const HEAD: &str = concat!(
    "SELECT c.checkpoint_id, c.fingerprint,
    w.task_ids, w.channels AS write_channels, w.types AS write_types, w.blobs AS write_blobs
FROM (
    SELECT thread_id, checkpoint_ns, checkpoint_id, ",
    fingerprint!(),
    " AS fingerprint FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 AND ($3::text IS NULL OR checkpoint_id = $3::text)
    ORDER BY checkpoint_id DESC LIMIT 1
) AS c
",
    writes_of_c!()
);

impl Fingerprinted for Uncached {
    type Fingerprint = String;

    async fn commit_fingerprinted(
        &self,
        commit: &Commit,
        _parent: Option<&String>,
    ) -> Result<(CheckpointConfig, Vec<String>), CheckpointError> {
        commit::commit(&self.pool, commit).await
    }

    async fn confirm(
        &self,
        config: &CheckpointConfig,
        id: &str,
        fingerprint: &String,
    ) -> Result<Option<Vec<PendingWrite>>, CheckpointError> {
        let row = sqlx::query(HEAD)
            .bind(escape(&config.thread_id))
            .bind(escape(&config.checkpoint_ns))
            .bind(config.checkpoint_id.as_deref().map(escape))
            .fetch_optional(&self.pool)
            .await
            .map_err(backend)?;
        let Some(row) = row else { return Ok(None) };
        let found = unescape(row.try_get::<String, _>("checkpoint_id").map_err(backend)?);
        let stored: String = row.try_get("fingerprint").map_err(backend)?;
        if found != id || &stored != fingerprint {
            return Ok(None);
        }
        let corrupt = |what: String| {
            CheckpointError::Corrupt(format!("checkpoint {id} of thread `{}`: {what}", config.thread_id))
        };
        pending_writes(&row, &corrupt).map(Some)
    }
}
