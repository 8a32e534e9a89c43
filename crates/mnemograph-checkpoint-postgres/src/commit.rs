//! The write path: a [`Commit`]'s checkpoints and writes in one transaction.
//!
//! A commit expecting the latest parent takes a transaction-scoped advisory lock named after its
//! thread and namespace before it reads the latest checkpoint, so two of this crate's writers of
//! one thread compare and store one after the other, and the loser sees the winner's checkpoint
//! and stores nothing. Writers of other threads do not wait (two threads whose names hash alike
//! only share the lock's queue).

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, Commit, ExpectParent};
use sqlx::{PgConnection, PgPool};

use crate::document::rows;
use crate::error::backend;
use crate::text::{escape, unescape};
use crate::writes::put_writes;

const INSERT_BLOBS: &str =
    "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
SELECT $1, $2, b.channel, b.version, b.type, b.blob
FROM UNNEST($3::text[], $4::text[], $5::text[], $6::bytea[]) AS b(channel, version, type, blob)
ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING";

const UPSERT_CHECKPOINT: &str = "INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata";

const LOCK: &str = "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))";

const LATEST: &str = "SELECT checkpoint_id FROM checkpoints
WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1";

/// Stores `commit` in one transaction; returns the address of its last checkpoint.
pub(crate) async fn commit(pool: &PgPool, commit: &Commit) -> Result<CheckpointConfig, CheckpointError> {
    if commit.chain.is_empty() {
        return Err(CheckpointError::empty_chain());
    }
    let mut tx = pool.begin().await.map_err(backend)?;
    if commit.expect == ExpectParent::Latest {
        let parent = &commit.parent;
        let (thread_id, checkpoint_ns) = (escape(&parent.thread_id), escape(&parent.checkpoint_ns));
        sqlx::query(LOCK).bind(&thread_id).bind(&checkpoint_ns).execute(&mut *tx).await.map_err(backend)?;
        let found: Option<String> = sqlx::query_scalar(LATEST)
            .bind(&thread_id)
            .bind(&checkpoint_ns)
            .fetch_optional(&mut *tx)
            .await
            .map_err(backend)?
            .map(unescape);
        if found != parent.checkpoint_id {
            return Err(CheckpointError::conflict(parent, found));
        }
    }
    for (parent, link) in commit.links() {
        if let Some(batch) = &link.writes {
            put_writes(&mut tx, &parent, &batch.writes, &batch.task_id, &batch.task_path).await?;
        }
        put(&mut tx, &parent, link).await?;
    }
    tx.commit().await.map_err(backend)?;
    Ok(commit.last())
}

/// One link's blobs and checkpoint row, on `conn`.
async fn put(
    conn: &mut PgConnection,
    parent: &CheckpointConfig,
    link: &mnemograph_checkpoint::checkpoint::ChainLink,
) -> Result<(), CheckpointError> {
    let checkpoint = &link.checkpoint;
    let rows = rows(checkpoint, &link.metadata, &link.new_versions)?;
    if !rows.blobs.is_empty() {
        let mut columns = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (channel, version, kind, bytes) in rows.blobs {
            columns.0.push(channel);
            columns.1.push(version);
            columns.2.push(kind);
            columns.3.push(bytes);
        }
        sqlx::query(INSERT_BLOBS)
            .bind(escape(&parent.thread_id))
            .bind(escape(&parent.checkpoint_ns))
            .bind(&columns.0)
            .bind(&columns.1)
            .bind(&columns.2)
            .bind(&columns.3)
            .execute(&mut *conn)
            .await
            .map_err(backend)?;
    }
    sqlx::query(UPSERT_CHECKPOINT)
        .bind(escape(&parent.thread_id))
        .bind(escape(&parent.checkpoint_ns))
        .bind(escape(&checkpoint.id))
        .bind(parent.checkpoint_id.as_deref().map(escape))
        .bind(&rows.document)
        .bind(&rows.metadata)
        .execute(&mut *conn)
        .await
        .map_err(backend)?;
    Ok(())
}
