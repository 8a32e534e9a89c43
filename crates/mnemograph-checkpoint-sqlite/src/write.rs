//! `commit` (and `put` through it) and `put_writes`: each one `BEGIN IMMEDIATE` transaction, so
//! a writer takes the database's write lock before it reads what it checks, and waits for it at
//! most the busy timeout.

use mnemograph_checkpoint::checkpoint::backend::write_index;
use mnemograph_checkpoint::checkpoint::serde::{checkpoint_to_msgpack, dumps_typed};
use mnemograph_checkpoint::checkpoint::{
    CheckpointConfig, CheckpointError, Commit, ExpectParent, WRITES_IDX_MAP,
};
use mnemograph_checkpoint::value::ChannelValue;
use sqlx::{SqliteConnection, SqlitePool};

use crate::error::{backend, Error};
use crate::{carry, metadata_text};

/// Stores every link of `commit` in one transaction, after checking the parents it expects.
pub(crate) async fn commit(
    pool: &SqlitePool,
    mut commit: Commit,
) -> Result<CheckpointConfig, CheckpointError> {
    if commit.chain.is_empty() {
        return Err(CheckpointError::empty_chain());
    }
    carry::fill(pool, &mut commit).await?;
    // Encoded before the lock is taken: the lock is held only for the statements.
    let mut rows = Vec::with_capacity(commit.chain.len());
    for (i, (parent, link)) in commit.links().enumerate() {
        let checkpoint = checkpoint_to_msgpack(&link.checkpoint).map_err(Error::Codec)?;
        let metadata = metadata_text::encode(&link.metadata)?;
        let writes = match &link.writes {
            Some(batch) => {
                Some((encode_writes(&batch.writes)?, batch.task_id.as_str(), batch.task_path.as_str()))
            }
            None => None,
        };
        let check = commit.expect == ExpectParent::Latest || i > 0;
        rows.push((parent, &link.checkpoint.id, checkpoint, metadata, writes, check));
    }
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(backend("put"))?;
    for (parent, id, checkpoint, metadata, writes, check) in &rows {
        if *check {
            let found = latest_id(&mut tx, parent).await?;
            if found != parent.checkpoint_id {
                return Err(CheckpointError::conflict(parent, found));
            }
        }
        if let Some((writes, task_id, task_path)) = writes {
            insert_writes(&mut tx, parent, writes, task_id, task_path).await?;
        }
        sqlx::query(
            "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, 'msgpack', ?, ?)",
        )
        .bind(&parent.thread_id)
        .bind(&parent.checkpoint_ns)
        .bind(id.as_str())
        .bind(parent.checkpoint_id.as_deref())
        .bind(checkpoint.as_slice())
        .bind(metadata.as_slice())
        .execute(&mut *tx)
        .await
        .map_err(backend("put"))?;
    }
    tx.commit().await.map_err(backend("put"))?;
    Ok(commit.last())
}

/// Stores a task's writes against the checkpoint at `config`, in one transaction.
pub(crate) async fn put_writes(
    pool: &SqlitePool,
    config: &CheckpointConfig,
    writes: &[(String, ChannelValue)],
    task_id: &str,
    task_path: &str,
) -> Result<(), CheckpointError> {
    let encoded = encode_writes(writes)?;
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(backend("put_writes"))?;
    insert_writes(&mut tx, config, &encoded, task_id, task_path).await?;
    tx.commit().await.map_err(backend("put_writes"))
}

/// One encoded pending write: its index, channel, type and bytes.
type EncodedWrite<'a> = (i64, &'a str, String, Vec<u8>);

fn encode_writes(writes: &[(String, ChannelValue)]) -> Result<Vec<EncodedWrite<'_>>, Error> {
    writes
        .iter()
        .enumerate()
        .map(|(position, (channel, value))| {
            let (kind, bytes) = dumps_typed(value)?;
            Ok((write_index(channel, position), channel.as_str(), kind, bytes))
        })
        .collect()
}

/// Inserts the rows as LangGraph does: when every write is to a special channel (an error, an
/// interrupt, a resume answer) they replace what the task stored before; otherwise rows already
/// stored are kept, so a task's writes saved twice are stored once.
async fn insert_writes(
    tx: &mut SqliteConnection,
    config: &CheckpointConfig,
    writes: &[EncodedWrite<'_>],
    task_id: &str,
    task_path: &str,
) -> Result<(), CheckpointError> {
    let Some(checkpoint_id) = &config.checkpoint_id else {
        return Err(CheckpointError::Invalid("pending writes need the checkpoint they belong to".to_owned()));
    };
    let special = writes.iter().all(|(_, channel, ..)| WRITES_IDX_MAP.iter().any(|(c, _)| c == channel));
    let verb = if special { "INSERT OR REPLACE" } else { "INSERT OR IGNORE" };
    let sql = format!(
        "{verb} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, \
         type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    );
    for (idx, channel, kind, bytes) in writes {
        sqlx::query(&sql)
            .bind(&config.thread_id)
            .bind(&config.checkpoint_ns)
            .bind(checkpoint_id)
            .bind(task_id)
            .bind(task_path)
            .bind(idx)
            .bind(*channel)
            .bind(kind.as_str())
            .bind(bytes.as_slice())
            .execute(&mut *tx)
            .await
            .map_err(backend("put_writes"))?;
    }
    Ok(())
}

/// The id of the latest checkpoint of `config`'s thread and namespace.
async fn latest_id(
    tx: &mut SqliteConnection,
    config: &CheckpointConfig,
) -> Result<Option<String>, CheckpointError> {
    sqlx::query_scalar(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? \
         ORDER BY checkpoint_id DESC LIMIT 1",
    )
    .bind(&config.thread_id)
    .bind(&config.checkpoint_ns)
    .fetch_optional(&mut *tx)
    .await
    .map_err(backend("put"))
}
