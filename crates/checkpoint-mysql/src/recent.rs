//! The checkpoints this process wrote last, so that reading one back costs a small query rather
//! than the whole document and its blobs.
//!
//! A run starts by reading the latest checkpoint of its thread, which is usually the one the same
//! process stored at the end of the previous turn. The full read moves every blob of that
//! checkpoint (a long conversation's messages, base64 inside a JSON aggregate) and decodes it
//! again. Instead, the saver keeps the last checkpoint it stored for each of the most recently
//! written (thread, namespace) pairs, and a read asks the server only which checkpoint is the
//! latest and what pending writes it has. When the server names the remembered checkpoint, the
//! tuple is that checkpoint with those writes; otherwise (another process wrote to the thread,
//! pruned or deleted it) the read is the full one. So another writer's checkpoint is never hidden:
//! the server is asked every time, only the bytes that cannot have changed are not sent again.
//! (A checkpoint row is never rewritten with other content under the same id by the engine;
//! every step has a new uuid6.)

use std::collections::HashMap;
use std::sync::Arc;

use graph_core::checkpoint::serde::loads_typed;
use graph_core::checkpoint::{
    Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple, PendingWrite,
};
use parking_lot::Mutex;
use sqlx::{MySqlPool, Row as _};

use crate::error::backend;
use crate::exact::{same, same_columns};
use crate::rows::{self, corrupt_at};
use crate::write::ns_hash;

/// How many (thread, namespace) pairs are remembered; the least recently written go first.
pub(crate) const DEFAULT_CAPACITY: usize = 1024;

/// The latest checkpoint id of a namespace (or the one bound, if it exists), its pending writes,
/// one row per write (one row with NULL writes when it has none), and its document and metadata
/// as stored, to tell that the row is still the one written.
const LATEST_WITH_WRITES: &str = concat!(
    "SELECT c.checkpoint_id, cw.task_id, cw.idx, cw.channel, cw.type, cw.`blob`, ",
    "CAST(c.checkpoint AS CHAR), CAST(c.metadata AS CHAR) FROM ",
    "(SELECT thread_id, checkpoint_ns_hash, checkpoint_id, checkpoint, metadata FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND checkpoint_id >= ? ORDER BY checkpoint_id DESC LIMIT 1) c ",
    "LEFT JOIN checkpoint_writes cw ON ",
    same_columns!("cw.thread_id", "c.thread_id"),
    " AND cw.checkpoint_ns_hash = c.checkpoint_ns_hash AND ",
    same_columns!("cw.checkpoint_id", "c.checkpoint_id")
);

/// What is remembered of one stored checkpoint.
#[derive(Debug)]
struct Entry {
    /// The checkpoint, with all its channel values.
    checkpoint: Checkpoint,
    /// Its metadata.
    metadata: CheckpointMetadata,
    /// Its parent's id.
    parent: Option<String>,
    /// The document text as sent to the server.
    document: String,
    /// The metadata text as sent to the server.
    metadata_text: String,
    /// When it was stored, for eviction.
    stamp: u64,
}

/// The entries by thread id and namespace, and the clock that stamps them.
#[derive(Debug, Default)]
struct Entries {
    /// Keyed by thread id and namespace.
    map: HashMap<(String, String), Arc<Entry>>,
    /// Incremented by every `remember`.
    clock: u64,
}

/// The last checkpoint stored per (thread, namespace), at most `capacity` of them.
#[derive(Debug)]
pub(crate) struct Recent {
    /// The entries.
    entries: Mutex<Entries>,
    /// At most this many entries.
    capacity: usize,
}

impl Recent {
    /// An empty cache of at most `capacity` entries (0: remembers nothing).
    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Self { entries: Mutex::new(Entries::default()), capacity })
    }

    /// Records `checkpoint`, just committed at `config` (its parent's address) as the texts
    /// `document` and `metadata_text`.
    pub(crate) fn remember(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        document: &str,
        metadata_text: &str,
    ) {
        if self.capacity == 0 {
            return;
        }
        let mut guard = self.entries.lock();
        let Entries { map: entries, clock } = &mut *guard;
        *clock += 1;
        let entry = Entry {
            checkpoint: checkpoint.clone(),
            metadata: metadata.clone(),
            parent: config.checkpoint_id.clone(),
            document: document.to_owned(),
            metadata_text: metadata_text.to_owned(),
            stamp: *clock,
        };
        entries.insert((config.thread_id.clone(), config.checkpoint_ns.clone()), Arc::new(entry));
        if entries.len() > self.capacity {
            // Evict the oldest eighth at once, so eviction is not a scan per put.
            let mut stamps: Vec<u64> = entries.values().map(|e| e.stamp).collect();
            let cut = stamps.len() / 8;
            let (_, &mut oldest_kept, _) = stamps.select_nth_unstable(cut);
            entries.retain(|_, e| e.stamp >= oldest_kept);
        }
    }

    /// Forgets every namespace of `thread_id` (after a delete or prune).
    pub(crate) fn forget_thread(&self, thread_id: &str) {
        self.entries.lock().map.retain(|(thread, _), _| thread != thread_id);
    }

    /// The remembered checkpoint of `config`'s namespace, if `config` asks for the latest or for
    /// that checkpoint.
    fn candidate(&self, config: &CheckpointConfig) -> Option<Arc<Entry>> {
        let guard = self.entries.lock();
        let entry = guard.map.get(&(config.thread_id.clone(), config.checkpoint_ns.clone()))?;
        match &config.checkpoint_id {
            Some(id) if *id != entry.checkpoint.id => None,
            _ => Some(Arc::clone(entry)),
        }
    }

    /// The tuple at `config` from memory and one small query, or `None` when the full read is
    /// needed (nothing remembered, or the server's latest is another checkpoint).
    pub(crate) async fn get_tuple(
        &self,
        pool: &MySqlPool,
        config: &CheckpointConfig,
    ) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let Some(entry) = self.candidate(config) else { return Ok(None) };
        let id = entry.checkpoint.id.as_str();
        let rows = sqlx::query(LATEST_WITH_WRITES)
            .bind(&config.thread_id)
            .bind(&config.thread_id)
            .bind(&ns_hash(&config.checkpoint_ns)[..])
            .bind(id)
            .fetch_all(pool)
            .await
            .map_err(backend)?;
        // Rows exist only for the remembered checkpoint or a newer one.
        let latest: Option<String> = match rows.first() {
            Some(row) => row.try_get(0).map_err(backend)?,
            None => None,
        };
        if latest.as_deref() != Some(id) {
            return Ok(None);
        }
        // The row was edited since it was written (by hand, or by a repair): read it whole.
        // MySQL 8 stores JSON in a binary form and renders it differently from the text sent,
        // so there this is always a miss; MariaDB keeps the text as sent.
        let stored: (Option<String>, Option<String>) =
            (rows[0].try_get(6).map_err(backend)?, rows[0].try_get(7).map_err(backend)?);
        if stored.0.as_deref() != Some(entry.document.as_str())
            || stored.1.as_deref() != Some(entry.metadata_text.as_str())
        {
            return Ok(None);
        }
        let mut writes = Vec::with_capacity(rows.len());
        for row in &rows {
            let task_id: Option<String> = row.try_get(1).map_err(backend)?;
            let Some(task_id) = task_id else { continue };
            let idx: i64 = row.try_get(2).map_err(backend)?;
            let channel: String = row.try_get(3).map_err(backend)?;
            let kind: String = row.try_get(4).map_err(backend)?;
            let bytes: Option<Vec<u8>> = row.try_get(5).map_err(backend)?;
            let value = loads_typed(&kind, bytes.as_deref().unwrap_or_default())
                .map_err(|e| corrupt_at(&config.thread_id, id, format!("write to `{channel}`: {e}")))?;
            writes.push((idx, PendingWrite { task_id, channel, value }));
        }
        let pending_writes = rows::in_langgraph_order(writes);
        let address = config.clone().with_checkpoint_id(id);
        let parent_config =
            entry.parent.as_ref().map(|parent| config.clone().with_checkpoint_id(parent.clone()));
        Ok(Some(CheckpointTuple {
            config: address,
            checkpoint: entry.checkpoint.clone(),
            metadata: entry.metadata.clone(),
            parent_config,
            pending_writes,
        }))
    }
}

#[cfg(test)]
mod tests {
    use graph_core::checkpoint::CheckpointSource;

    use super::*;

    fn remember(recent: &Recent, thread: &str, id: &str) {
        let checkpoint = Checkpoint { id: id.to_owned(), ..Checkpoint::default() };
        let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
        recent.remember(&CheckpointConfig::thread(thread), &checkpoint, &metadata, "{}", "{}");
    }

    #[test]
    fn the_least_recently_written_threads_are_forgotten_first() {
        let recent = Recent::new(64);
        for t in 0..100 {
            remember(&recent, &format!("t{t}"), "a");
        }
        let map = &recent.entries.lock().map;
        assert!(map.len() <= 64, "{} entries", map.len());
        assert!(map.contains_key(&("t99".to_owned(), String::new())), "the newest is kept");
        assert!(!map.contains_key(&("t0".to_owned(), String::new())), "the oldest is gone");
    }

    #[test]
    fn only_the_latest_or_the_remembered_id_is_a_candidate() {
        let recent = Recent::new(8);
        remember(&recent, "t", "a");
        remember(&recent, "t", "b");
        let latest = CheckpointConfig::thread("t");
        assert_eq!(recent.candidate(&latest).map(|e| e.checkpoint.id.clone()), Some("b".to_owned()));
        assert!(recent.candidate(&latest.clone().with_checkpoint_id("a")).is_none());
        assert!(recent.candidate(&latest.clone().with_ns("child")).is_none());
        recent.forget_thread("t");
        assert!(recent.candidate(&latest).is_none());
        assert!(Recent::new(0).candidate(&latest).is_none());
    }
}
