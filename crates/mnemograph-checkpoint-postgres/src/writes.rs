//! Pending writes: LangGraph's `put_writes` rows, all of a task's in one statement.

use mnemograph_checkpoint::checkpoint::backend::write_index;
use mnemograph_checkpoint::checkpoint::serde::dumps_typed;
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, WRITES_IDX_MAP};
use mnemograph_checkpoint::value::ChannelValue;
use sqlx::PgConnection;

use crate::error::{backend, Error};
use crate::text::escape;

/// Regular writes keep the first value stored for a `(task_id, idx)`.
const INSERT: &str = "INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, $2, $3, $4, $5, w.idx, w.channel, w.type, w.blob
FROM UNNEST($6::int4[], $7::text[], $8::text[], $9::bytea[]) AS w(idx, channel, type, blob)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING";

/// A batch of special channels only (error, interrupt, resume, ...) replaces what is stored.
const UPSERT: &str = "INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
SELECT $1, $2, $3, $4, $5, w.idx, w.channel, w.type, w.blob
FROM UNNEST($6::int4[], $7::text[], $8::text[], $9::bytea[]) AS w(idx, channel, type, blob)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
    channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob";

/// Stores `writes` of `task_id` against the checkpoint at `config`, on `conn`.
pub(crate) async fn put_writes(
    conn: &mut PgConnection,
    config: &CheckpointConfig,
    writes: &[(String, ChannelValue)],
    task_id: &str,
    task_path: &str,
) -> Result<(), CheckpointError> {
    let checkpoint_id = checkpoint_id(config)?;
    if writes.is_empty() {
        return Ok(());
    }
    let rows = Rows::of(writes)?;
    sqlx::query(if rows.upsert { UPSERT } else { INSERT })
        .bind(escape(&config.thread_id))
        .bind(escape(&config.checkpoint_ns))
        .bind(escape(checkpoint_id))
        .bind(escape(task_id))
        .bind(escape(task_path))
        .bind(&rows.idx)
        .bind(&rows.channels)
        .bind(&rows.kinds)
        .bind(&rows.blobs)
        .execute(conn)
        .await
        .map_err(backend)?;
    Ok(())
}

/// The checkpoint writes are stored against.
pub(crate) fn checkpoint_id(config: &CheckpointConfig) -> Result<&str, CheckpointError> {
    config
        .checkpoint_id
        .as_deref()
        .ok_or_else(|| CheckpointError::Invalid("put_writes needs a checkpoint id".to_owned()))
}

/// The columns that differ between a batch's rows, in stored form.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    /// Whether the batch replaces what is stored (special channels only) or keeps it.
    pub(crate) upsert: bool,
    pub(crate) idx: Vec<i32>,
    pub(crate) channels: Vec<String>,
    pub(crate) kinds: Vec<String>,
    pub(crate) blobs: Vec<Vec<u8>>,
}

impl Rows {
    /// The rows of a batch: LangGraph's indexes, the values encoded.
    pub(crate) fn of(writes: &[(String, ChannelValue)]) -> Result<Self, CheckpointError> {
        let upsert = writes.iter().all(|(channel, _)| WRITES_IDX_MAP.iter().any(|(c, _)| c == channel));
        let mut rows = Rows { upsert, ..Rows::default() };
        for (position, (channel, value)) in writes.iter().enumerate() {
            let idx = i32::try_from(write_index(channel, position)).map_err(|_| {
                CheckpointError::Invalid(format!("too many writes in one batch ({})", writes.len()))
            })?;
            let (kind, bytes) = dumps_typed(value).map_err(Error::Codec)?;
            if upsert {
                // One statement cannot update a row twice; the last write of a special channel
                // wins, as when each is stored in turn.
                rows.remove(idx);
            }
            rows.idx.push(idx);
            rows.channels.push(escape(channel).into_owned());
            rows.kinds.push(kind);
            rows.blobs.push(bytes);
        }
        Ok(rows)
    }

    /// Drops the row at `idx`, if any.
    fn remove(&mut self, idx: i32) {
        if let Some(i) = self.idx.iter().position(|&x| x == idx) {
            self.idx.remove(i);
            self.channels.remove(i);
            self.kinds.remove(i);
            self.blobs.remove(i);
        }
    }
}
