//! Checks and batched inserts shared by the savers' write paths.

use graph_core::checkpoint::serde::dumps_typed;
use graph_core::checkpoint::{write_index, ChannelValue, CheckpointConfig, CheckpointError, WRITES_IDX_MAP};
use md5::{Digest, Md5};
use sqlx::MySqlPool;

use crate::error::{backend, Error};
use crate::exact::same;
use crate::script::{Bind, Statement};
use crate::tx::Tx;
use crate::{latest, sql};

/// Length of the `VARCHAR(150)` columns: ids, channels, versions, type tags.
pub(crate) const ID_LEN: usize = 150;
/// Length of the `VARCHAR(2000)` columns: `checkpoint_ns`, `task_path`.
pub(crate) const NS_LEN: usize = 2000;

/// Rows per multi-row statement at most: MySQL allows 65,535 placeholders per statement.
pub(crate) const MAX_PLACEHOLDERS: usize = 65_535;
/// Bytes of blob data per statement at most, well under the servers' default `max_allowed_packet`
/// (16 MiB on MariaDB 10.11, 64 MiB on MySQL 8), so a large batch becomes several statements.
const BATCH_BYTES: usize = 4 << 20;

/// `UNHEX(MD5(checkpoint_ns))`, computed here rather than by the server: the same 16 bytes, one
/// function call fewer per row, and the value can be bound as it is.
pub(crate) fn ns_hash(checkpoint_ns: &str) -> [u8; 16] {
    Md5::digest(checkpoint_ns.as_bytes()).into()
}

/// `Err(Invalid)` naming `column` when `value` is longer than the column holds.
///
/// The savers write with `INSERT IGNORE`, under which MySQL truncates an overlong value with a
/// warning even in strict mode; a truncated id would silently address another row, so it is
/// refused before anything is sent.
pub(crate) fn fits(column: &str, value: &str, max_chars: usize) -> Result<(), CheckpointError> {
    // UTF-8 has at least one byte per character: short strings need no counting.
    if value.len() <= max_chars {
        return Ok(());
    }
    let chars = value.chars().count();
    if chars <= max_chars {
        return Ok(());
    }
    Err(CheckpointError::Invalid(format!(
        "`{column}` is {chars} characters long; the MySQL column holds at most {max_chars}"
    )))
}

/// Checks the thread id and namespace of an address.
pub(crate) fn check_address(config: &CheckpointConfig) -> Result<(), CheckpointError> {
    fits("thread_id", &config.thread_id, ID_LEN)?;
    fits("checkpoint_ns", &config.checkpoint_ns, NS_LEN)?;
    if let Some(parent) = &config.checkpoint_id {
        fits("parent_checkpoint_id", parent, ID_LEN)?;
    }
    Ok(())
}

/// One `checkpoint_blobs` row to insert.
#[derive(Debug)]
pub(crate) struct Blob<'a> {
    /// The channel.
    pub(crate) channel: &'a str,
    /// The version the value belongs to.
    pub(crate) version: &'a str,
    /// Serializer type tag.
    pub(crate) kind: String,
    /// Serialized value.
    pub(crate) bytes: Vec<u8>,
}

/// The statements inserting blob rows, existing `(channel, version)` rows kept: as few as fit.
pub(crate) fn blob_statements<'a>(
    config: &'a CheckpointConfig,
    hash: &[u8; 16],
    blobs: &[&'a Blob<'a>],
) -> Vec<Statement<'a>> {
    batches(blobs, |b| b.bytes.len(), MAX_PLACEHOLDERS / 7)
        .map(|batch| {
            let text = sql::multi_row(sql::INSERT_BLOBS, sql::BLOB_ROW, batch.len(), "");
            let mut statement = Statement::with_capacity(text, 7 * batch.len());
            for blob in batch {
                statement
                    .push(Bind::Text(&config.thread_id))
                    .push(Bind::Text(&config.checkpoint_ns))
                    .push(Bind::Hash(*hash))
                    .push(Bind::Text(blob.channel))
                    .push(Bind::Text(blob.version))
                    .push(Bind::Text(&blob.kind))
                    .push(Bind::Bytes(&blob.bytes));
            }
            statement
        })
        .collect()
}

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

/// Checks and encodes the writes of `put_writes` (and of the links of `put_chain`).
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

/// `put_writes` of both savers (their `checkpoint_writes` tables are the same).
pub(crate) async fn put_writes(
    pool: &MySqlPool,
    config: &CheckpointConfig,
    writes: &[(String, ChannelValue)],
    task_id: &str,
    task_path: &str,
) -> Result<(), CheckpointError> {
    let prepared = prepare_writes(config, writes, task_id, task_path)?;
    if prepared.rows.is_empty() {
        return Ok(());
    }
    let statements = write_statements(config, &prepared);
    let mut attempt = 1;
    loop {
        let done = if let [single] = &statements[..] {
            // One statement is its own transaction.
            single.query().execute(pool).await.map(drop)
        } else {
            async {
                let mut tx = pool.begin().await?;
                for statement in &statements {
                    statement.query().execute(&mut *tx).await?;
                }
                tx.commit().await
            }
            .await
        };
        match done.map_err(backend) {
            // Rolled back whole by InnoDB to break a deadlock; the rows are idempotent anyway.
            Err(e) if latest::is_deadlock(&e) && attempt < latest::DEADLOCK_ATTEMPTS => {
                latest::backoff(attempt).await;
                attempt += 1;
            }
            done => return done,
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

/// `delete_thread` of both savers: every row of the thread in the three tables, in one
/// transaction.
pub(crate) async fn delete_thread(pool: &MySqlPool, thread_id: &str) -> Result<(), CheckpointError> {
    let mut tx = pool.begin().await.map_err(backend)?;
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        // Exactly this thread (see `exact`), not the ones its collation confuses with it.
        sqlx::query(&format!("DELETE FROM {table} WHERE {}", same!("thread_id")))
            .bind(thread_id)
            .bind(thread_id)
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
    }
    tx.commit().await.map_err(backend)
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

/// Splits `items` into runs of at most `max_rows` items and, unless a single item is larger,
/// at most [`BATCH_BYTES`] of payload.
pub(crate) fn batches<'a, T>(
    items: &'a [T],
    size: impl Fn(&T) -> usize + 'a,
    max_rows: usize,
) -> impl Iterator<Item = &'a [T]> + 'a {
    let mut rest = items;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0;
        let mut n = 0;
        while n < rest.len() && n < max_rows {
            let next = size(&rest[n]);
            if n > 0 && bytes + next > BATCH_BYTES {
                break;
            }
            bytes += next;
            n += 1;
        }
        let (batch, tail) = rest.split_at(n);
        rest = tail;
        Some(batch)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_hash_is_mysql_unhex_md5() {
        let hex: String = ns_hash("").iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "d41d8cd98f00b204e9800998ecf8427e");
    }

    #[test]
    fn overlong_values_are_refused_by_column() {
        assert!(fits("thread_id", &"x".repeat(150), ID_LEN).is_ok());
        // 150 characters of 3 bytes each still fit: the limit is in characters.
        assert!(fits("thread_id", &"线".repeat(150), ID_LEN).is_ok());
        let err = fits("thread_id", &"线".repeat(151), ID_LEN).unwrap_err();
        assert!(
            matches!(&err, CheckpointError::Invalid(m) if m.contains("`thread_id`") && m.contains("151")),
            "{err}"
        );
    }

    #[test]
    fn batches_split_by_rows_and_bytes() {
        let sizes = [1, 2, 3, 4, 5];
        let by_rows: Vec<usize> = batches(&sizes, |_| 0, 2).map(<[_]>::len).collect();
        assert_eq!(by_rows, [2, 2, 1]);
        let big = [BATCH_BYTES, 1, BATCH_BYTES - 1, 2];
        let by_bytes: Vec<usize> = batches(&big, |s| *s, 100).map(<[_]>::len).collect();
        assert_eq!(by_bytes, [1, 2, 1]);
        assert_eq!(batches(&[] as &[usize], |s| *s, 1).count(), 0);
    }
}
