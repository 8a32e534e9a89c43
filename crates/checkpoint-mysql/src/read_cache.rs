//! The checkpoints this process wrote last, so that reading one back costs two small key reads
//! rather than the whole document and its blobs.
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

use std::ops::Deref;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use graph_core::checkpoint::backend::{RecentCheckpoints, Remembered};
use graph_core::checkpoint::serde::loads_typed;
use graph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    PendingWrite,
};
use sqlx::{MySqlPool, Row as _};

use crate::error::backend;
use crate::exact::same;
use crate::keys::ns_hash;
use crate::rows::{self, corrupt_at};
use crate::script::fetch_together;
use crate::statement::{Bind, Statement};
use crate::texts::Texts;

/// How many (thread, namespace) pairs are remembered; the least recently written go first.
pub(crate) const DEFAULT_CAPACITY: usize = graph_core::checkpoint::backend::DEFAULT_RECENT_CAPACITY;

/// The latest checkpoint of a namespace, or none when it is older than the one bound: its id, and
/// its document and metadata as stored, to tell that the row is still the one written. A range
/// read of the primary key that stops at the first row.
const LATEST_SINCE: &str = concat!(
    "SELECT checkpoint_id, CAST(checkpoint AS CHAR), CAST(metadata AS CHAR) FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND checkpoint_id >= ? ORDER BY checkpoint_id DESC LIMIT 1"
);

/// The pending writes of one checkpoint, a prefix read of `checkpoint_writes`' primary key.
const WRITES_OF: &str = concat!(
    "SELECT task_id, idx, channel, type, `blob` FROM checkpoint_writes WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND ",
    same!("checkpoint_id")
);

/// Whether the server gives back a checkpoint's texts as they were sent: not yet known, yes
/// (MariaDB keeps a JSON column's text), or no (MySQL 8 stores JSON in a binary form and renders
/// it its own way, or a row was rewritten).
const TEXTS_UNKNOWN: u8 = 0;
const TEXTS_KEPT: u8 = 1;
const TEXTS_CHANGED: u8 = 2;

/// The last checkpoint stored per (thread, namespace), at most `capacity` of them.
#[derive(Debug)]
pub(crate) struct Recent {
    /// The checkpoints.
    memory: RecentCheckpoints<Texts>,
    /// What reading a remembered row back showed (`TEXTS_*`). Runs start from memory, and put
    /// checks compare a remembered parent's texts, only once a row read back was found
    /// unchanged: on a server that renders JSON anew, every comparison would fail.
    texts: AtomicU8,
}

impl Deref for Recent {
    type Target = RecentCheckpoints<Texts>;
    fn deref(&self) -> &Self::Target {
        &self.memory
    }
}

impl Recent {
    /// An empty cache of at most `capacity` entries (0: remembers nothing).
    pub(crate) fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Self { memory: RecentCheckpoints::new(capacity), texts: AtomicU8::new(TEXTS_UNKNOWN) })
    }

    /// Whether rows read back were found as this saver wrote them.
    fn texts_kept(&self) -> bool {
        self.texts.load(Ordering::Relaxed) == TEXTS_KEPT
    }

    /// The latest checkpoint of `config`'s namespace as this saver stored it, without asking the
    /// server ([`Checkpointer::remembered_latest`](graph_core::checkpoint::Checkpointer::remembered_latest));
    /// only once the server is known to keep texts, so that the put that follows can tell the
    /// row is unchanged.
    pub(crate) fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        if config.checkpoint_id.is_some() || !self.texts_kept() {
            return None;
        }
        self.candidate(config).map(|entry| entry.tuple(config, Vec::new()))
    }

    /// The remembered texts of the checkpoint at `config` (a put's parent), for the put's check
    /// that its row is unchanged; `None` when nothing is remembered for it or texts cannot be
    /// compared on this server.
    pub(crate) fn parent(&self, config: &CheckpointConfig) -> Option<Arc<Remembered<Texts>>> {
        config.checkpoint_id.as_ref()?;
        self.texts_kept().then(|| self.candidate(config)).flatten()
    }

    /// Records `checkpoint`, just committed at `config` (its parent's address) as the texts
    /// `document` and `metadata_text`.
    pub(crate) fn remember(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
        document: &str,
        metadata_text: &str,
    ) {
        if self.capacity() == 0 {
            return;
        }
        let texts = Texts::new(document, metadata_text);
        self.memory.remember(config, checkpoint, metadata, new_versions, texts);
    }

    /// The tuple at `config` from memory and two small reads in one round trip, or `None` when the full read is
    /// needed (nothing remembered, or the server's latest is another checkpoint).
    pub(crate) async fn get_tuple(
        &self,
        pool: &MySqlPool,
        config: &CheckpointConfig,
    ) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let Some(entry) = self.candidate(config) else { return Ok(None) };
        let id = entry.checkpoint.id.as_str();
        let hash = ns_hash(&config.checkpoint_ns);
        // Both reads in one round trip. The writes are read for the remembered checkpoint before
        // it is known to be the latest; when it is not, they are not used.
        let mut latest = Statement::by_thread(LATEST_SINCE, &config.thread_id, hash);
        latest.push(Bind::Text(id));
        let mut pending = Statement::by_thread(WRITES_OF, &config.thread_id, hash);
        pending.push(Bind::Text(id)).push(Bind::Text(id));
        let mut conn = pool.acquire().await.map_err(backend)?;
        let mut results = fetch_together(&mut conn, &[latest, pending]).await.map_err(backend)?;
        let rows = results.pop().unwrap_or_default();
        let head = results.pop().unwrap_or_default();
        // A row exists only for the remembered checkpoint or a newer one.
        let Some(head) = head.first() else { return Ok(None) };
        let latest: String = head.try_get(0).map_err(backend)?;
        if latest != id {
            return Ok(None);
        }
        // The row was edited since it was written (by hand, or by a repair): read it whole.
        // MySQL 8 stores JSON in a binary form and renders it differently from the text sent,
        // so there this is always a miss; MariaDB keeps the text as sent.
        let unchanged = entry.fingerprint.match_row(head)?;
        // The first comparison tells whether this server keeps texts; a later edit does not
        // change what was learnt.
        let learnt = if unchanged { TEXTS_KEPT } else { TEXTS_CHANGED };
        let _ = self.texts.compare_exchange(TEXTS_UNKNOWN, learnt, Ordering::Relaxed, Ordering::Relaxed);
        if !unchanged {
            return Ok(None);
        }
        let mut writes = Vec::with_capacity(rows.len());
        for row in &rows {
            let task_id: String = row.try_get(0).map_err(backend)?;
            let idx: i64 = row.try_get(1).map_err(backend)?;
            let channel: String = row.try_get(2).map_err(backend)?;
            let kind: String = row.try_get(3).map_err(backend)?;
            let bytes: Option<Vec<u8>> = row.try_get(4).map_err(backend)?;
            let value = loads_typed(&kind, bytes.as_deref().unwrap_or_default())
                .map_err(|e| corrupt_at(&config.thread_id, id, format!("write to `{channel}`: {e}")))?;
            writes.push((idx, PendingWrite { task_id, channel, value }));
        }
        Ok(Some(entry.tuple(config, rows::in_langgraph_order(writes))))
    }
}
