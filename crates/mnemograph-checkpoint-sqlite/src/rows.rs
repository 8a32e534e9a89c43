//! Rows of the two tables as this crate reads them, and their decoding into LangGraph's tuples.

use mnemograph_checkpoint::checkpoint::serde::{checkpoint_from_msgpack, loads_typed};
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, CheckpointTuple, PendingWrite};

use sqlx::sqlite::SqliteRow;
use sqlx::{FromRow, Row};

use crate::metadata_text;

/// The columns every read of `checkpoints` selects, in [`CheckpointRow`]'s order.
pub(crate) const CHECKPOINT_COLUMNS: &str =
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata";

/// One row of `checkpoints`.
pub(crate) struct CheckpointRow {
    pub(crate) thread_id: String,
    pub(crate) checkpoint_ns: String,
    pub(crate) checkpoint_id: String,
    pub(crate) parent_checkpoint_id: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) checkpoint: Option<Vec<u8>>,
    pub(crate) metadata: Option<Vec<u8>>,
}

/// One row of `writes`, as the pending-writes query selects it.
pub(crate) struct WriteRow {
    pub(crate) task_id: String,
    pub(crate) channel: String,
    pub(crate) kind: Option<String>,
    pub(crate) value: Option<Vec<u8>>,
}

impl FromRow<'_, SqliteRow> for CheckpointRow {
    fn from_row(row: &SqliteRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            thread_id: row.try_get(0)?,
            checkpoint_ns: row.try_get(1)?,
            checkpoint_id: row.try_get(2)?,
            parent_checkpoint_id: row.try_get(3)?,
            kind: row.try_get(4)?,
            checkpoint: row.try_get(5)?,
            metadata: row.try_get(6)?,
        })
    }
}

impl FromRow<'_, SqliteRow> for WriteRow {
    fn from_row(row: &SqliteRow) -> Result<Self, sqlx::Error> {
        Ok(Self {
            task_id: row.try_get(0)?,
            channel: row.try_get(1)?,
            kind: row.try_get(2)?,
            value: row.try_get(3)?,
        })
    }
}

/// The pending writes of one checkpoint, in LangGraph's order: by task path, task id and index.
pub(crate) const PENDING_WRITES: &str = "SELECT task_id, channel, type, value FROM writes \
     WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? ORDER BY task_path, task_id, idx";

impl CheckpointRow {
    /// The tuple of this row with `writes`. A row that does not decode is
    /// [`CheckpointError::Corrupt`], naming the thread and checkpoint.
    pub(crate) fn into_tuple(self, writes: Vec<WriteRow>) -> Result<CheckpointTuple, CheckpointError> {
        let corrupt = |what: String| {
            CheckpointError::Corrupt(format!(
                "checkpoint {} of thread `{}` namespace `{}`: {what}",
                self.checkpoint_id, self.thread_id, self.checkpoint_ns
            ))
        };
        let checkpoint = match (self.kind.as_deref(), self.checkpoint.as_deref()) {
            (Some("msgpack"), Some(bytes)) => {
                checkpoint_from_msgpack(bytes).map_err(|e| corrupt(e.to_string()))?
            }
            (kind, _) => {
                return Err(corrupt(format!("checkpoint of type {kind:?} is not a msgpack document")))
            }
        };
        let metadata = self.metadata.as_deref().ok_or_else(|| corrupt("no metadata".to_owned()))?;
        let metadata = metadata_text::decode(metadata).map_err(corrupt)?;
        let pending_writes = writes
            .into_iter()
            .map(|w| {
                let value = loads_typed(
                    w.kind.as_deref().unwrap_or_default(),
                    w.value.as_deref().unwrap_or_default(),
                )
                .map_err(|e| {
                    corrupt(format!("pending write of task `{}` to `{}`: {e}", w.task_id, w.channel))
                })?;
                Ok(PendingWrite { task_id: w.task_id, channel: w.channel, value })
            })
            .collect::<Result<_, CheckpointError>>()?;
        let at = CheckpointConfig::thread(&self.thread_id).with_ns(&self.checkpoint_ns);
        Ok(CheckpointTuple {
            config: at.clone().with_checkpoint_id(&self.checkpoint_id),
            parent_config: self
                .parent_checkpoint_id
                .filter(|p| !p.is_empty())
                .map(|p| at.with_checkpoint_id(p)),
            checkpoint,
            metadata,
            pending_writes,
        })
    }
}
