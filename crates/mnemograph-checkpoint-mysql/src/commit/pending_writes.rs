//! The pending writes of tasks, `checkpoint_writes` rows: `put_writes` of both savers, and the
//! writes a link of a commit carries.

use mnemograph_checkpoint::checkpoint::backend::{record_io, write_index};
use mnemograph_checkpoint::checkpoint::serde::dumps_typed;
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, WRITES_IDX_MAP};
use mnemograph_checkpoint::value::ChannelValue;
use sqlx::MySqlPool;

use super::batches::{batches, MAX_PLACEHOLDERS};
use super::check_with_commit::ER_DATA_OUT_OF_RANGE;
use super::limits::{check_address, fits, ID_LEN, NS_LEN};
use super::retry::{backoff, error_number, is_deadlock, DEADLOCK_ATTEMPTS};
use super::tx::Tx;
use crate::error::{backend, Error};
use crate::fence::Fence;
use crate::keys::ns_hash;
use crate::sql;
use crate::statement::{Bind, Statement};

/// One `checkpoint_writes` row to insert.
#[derive(Debug)]
struct Write<'a> {
    /// Position in the batch, or the fixed index of a special channel.
    idx: i64,
    /// The channel written.
    channel: &'a str,
    /// Serializer type tag.
    kind: String,
    /// Serialized value.
    bytes: Vec<u8>,
}

/// A task's writes, checked and encoded, ready to insert.
#[derive(Debug)]
pub(crate) struct TaskWrites<'a> {
    /// The checkpoint the writes belong to.
    checkpoint_id: &'a str,
    /// The writing task.
    task_id: &'a str,
    /// The writing task's path.
    task_path: &'a str,
    /// The rows.
    rows: Vec<Write<'a>>,
    /// LangGraph's rule: a batch made only of special channels (`__error__`, `__interrupt__`,
    /// ...) replaces what was there; any other batch only fills in what is missing.
    upsert: bool,
}

/// Checks and encodes the writes of `put_writes` (and of the links of a commit).
pub(crate) fn prepare_writes<'a>(
    config: &'a CheckpointConfig,
    writes: &'a [(String, ChannelValue)],
    task_id: &'a str,
    task_path: &'a str,
) -> Result<TaskWrites<'a>, CheckpointError> {
    let Some(checkpoint_id) = config.checkpoint_id.as_deref() else {
        return Err(CheckpointError::Invalid("put_writes needs a config with a checkpoint_id".to_owned()));
    };
    check_address(config)?;
    fits("checkpoint_id", checkpoint_id, ID_LEN)?;
    fits("task_id", task_id, ID_LEN)?;
    fits("task_path", task_path, NS_LEN)?;
    let upsert =
        writes.iter().all(|(channel, _)| WRITES_IDX_MAP.iter().any(|(special, _)| special == channel));
    let mut rows = Vec::with_capacity(writes.len());
    for (position, (channel, value)) in writes.iter().enumerate() {
        fits("channel", channel, ID_LEN)?;
        let (kind, bytes) = dumps_typed(value).map_err(Error::from)?;
        fits("type", &kind, ID_LEN)?;
        rows.push(Write { idx: write_index(channel, position), channel, kind, bytes });
    }
    Ok(TaskWrites { checkpoint_id, task_id, task_path, rows, upsert })
}

/// `put_writes` of both savers (their `checkpoint_writes` tables are the same); with `fence`, it
/// is checked in the writes' transaction first, and its failure refuses them all.
pub(crate) async fn put_writes(
    pool: &MySqlPool,
    config: &CheckpointConfig,
    writes: &[(String, ChannelValue)],
    task_id: &str,
    task_path: &str,
    fence: Option<&Fence>,
) -> Result<(), CheckpointError> {
    let prepared = prepare_writes(config, writes, task_id, task_path)?;
    if prepared.rows.is_empty() {
        return Ok(());
    }
    let statements = write_statements(config, &prepared);
    let bytes = statements.iter().map(|s| s.sql.len() + s.payload()).sum();
    // A single statement is its own transaction; more (the fence's check counts) are wrapped in
    // `BEGIN` and `COMMIT`.
    let single = statements.len() == 1 && fence.is_none();
    let round_trips = if single { 1 } else { statements.len() + usize::from(fence.is_some()) + 2 };
    let mut attempt = 1;
    loop {
        let done = if let (true, [only]) = (single, &statements[..]) {
            only.query().execute(pool).await.map(drop).map_err(backend)
        } else {
            async {
                let mut tx = pool.begin().await.map_err(backend)?;
                if let Some(fence) = fence {
                    match fence.statement().query().execute(&mut *tx).await {
                        Err(e) if error_number(&e) == Some(ER_DATA_OUT_OF_RANGE) => {
                            return Err(fence.refused())
                        }
                        checked => checked.map_err(backend)?,
                    };
                }
                for statement in &statements {
                    statement.query().execute(&mut *tx).await.map_err(backend)?;
                }
                tx.commit().await.map_err(backend)
            }
            .await
            .map(drop)
        };
        match done {
            // Rolled back whole by InnoDB to break a deadlock; the rows are idempotent anyway.
            Err(e) if is_deadlock(&e) && attempt < DEADLOCK_ATTEMPTS => {
                backoff(attempt).await;
                attempt += 1;
            }
            done => {
                record_io("mysql", bytes, round_trips * attempt);
                return done;
            }
        }
    }
}

/// Inserts prepared writes inside the transaction `tx` (queued, to go with its `COMMIT`).
pub(crate) async fn insert_writes(
    tx: &mut Tx,
    config: &CheckpointConfig,
    prepared: &TaskWrites<'_>,
) -> Result<(), sqlx::Error> {
    for statement in write_statements(config, prepared) {
        tx.execute_unordered(&statement).await?;
    }
    Ok(())
}

/// The statements that insert `writes` (`upsert`: latest wins; otherwise first wins): one, or
/// several when the rows do not fit in one.
fn write_statements<'q>(config: &'q CheckpointConfig, writes: &'q TaskWrites<'q>) -> Vec<Statement<'q>> {
    let hash = ns_hash(&config.checkpoint_ns);
    let (prefix, tail) = if writes.upsert {
        (sql::upsert_writes(), sql::UPSERT_WRITES_TAIL)
    } else {
        (sql::insert_writes(), "")
    };
    batches(&writes.rows, |w| w.bytes.len(), MAX_PLACEHOLDERS / 10)
        .map(|batch| {
            let text = sql::multi_row(&prefix, sql::WRITE_ROW, batch.len(), tail);
            let mut statement = Statement::with_capacity(text, 10 * batch.len());
            for w in batch {
                statement
                    .push(Bind::Text(&config.thread_id))
                    .push(Bind::Text(&config.checkpoint_ns))
                    .push(Bind::Hash(hash))
                    .push(Bind::Text(writes.checkpoint_id))
                    .push(Bind::Text(writes.task_id))
                    .push(Bind::Text(writes.task_path))
                    .push(Bind::Int(w.idx))
                    .push(Bind::Text(w.channel))
                    .push(Bind::Text(&w.kind))
                    .push(Bind::Bytes(&w.bytes));
            }
            statement
        })
        .collect()
}
