//! What the read cache ([`ReadCache`](mnemograph_checkpoint::checkpoint::backend::ReadCache)) needs of
//! the full saver: the texts each commit stored, a parent check that also compares them, and two
//! small reads in one round trip that tell whether a remembered checkpoint is still the latest,
//! unchanged, with its pending writes.
//!
//! A run starts by reading the latest checkpoint of its thread, which is usually the one the same
//! process stored at the end of the previous turn. The full read moves every blob of that
//! checkpoint (a long conversation's messages, base64 inside a JSON aggregate) and decodes it
//! again. With the cache, a read asks the server only which checkpoint is the latest and what
//! pending writes it has; when the server names the remembered checkpoint and its row still holds
//! the texts stored, the tuple is that checkpoint with those writes; otherwise (another process
//! wrote to the thread, pruned or deleted it, or the row was edited) the read is the full one.

use mnemograph_checkpoint::checkpoint::backend::Fingerprinted;
use mnemograph_checkpoint::checkpoint::serde::loads_typed;
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, Commit, PendingWrite};
use sqlx::Row as _;

use crate::error::backend;
use crate::exact::same;
use crate::keys::ns_hash;
use crate::rows::{self, corrupt_at};
use crate::script::fetch_together;
use crate::statement::{Bind, Statement};
use crate::texts::Texts;
use crate::uncached::Uncached;

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

impl Fingerprinted for Uncached {
    type Fingerprint = Texts;

    async fn commit_fingerprinted(
        &self,
        commit: &Commit,
        parent: Option<&Texts>,
    ) -> Result<(CheckpointConfig, Vec<Texts>), CheckpointError> {
        // A parent this saver remembers may be where a run started without reading it back: its
        // row must still be the one stored, where the server lets that be told.
        self.put_target().commit(commit, parent.filter(|_| self.texts.kept())).await
    }

    /// Both reads in one round trip. The writes are read for the remembered checkpoint before it
    /// is known to be the latest; when it is not, they are not used.
    async fn confirm(
        &self,
        config: &CheckpointConfig,
        id: &str,
        texts: &Texts,
    ) -> Result<Option<Vec<PendingWrite>>, CheckpointError> {
        let hash = ns_hash(&config.checkpoint_ns);
        let mut latest = Statement::by_thread(LATEST_SINCE, &config.thread_id, hash);
        latest.push(Bind::Text(id));
        let mut pending = Statement::by_thread(WRITES_OF, &config.thread_id, hash);
        pending.push(Bind::Text(id)).push(Bind::Text(id));
        let mut conn = self.pool.acquire().await.map_err(backend)?;
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
        let unchanged = texts.match_row(head)?;
        self.texts.learn(unchanged);
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
        Ok(Some(rows::in_langgraph_order(writes)))
    }

    fn checks_remembered_parent(&self) -> bool {
        self.texts.kept()
    }
}
