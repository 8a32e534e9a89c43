//! The write path: a [`Commit`]'s checkpoints and writes in one transaction, each link (the
//! writes it carries for its parent, its blobs, its checkpoint row) in one statement.
//!
//! A commit expecting the latest parent takes a transaction-scoped advisory lock named after its
//! thread and namespace before it reads the latest checkpoint, so two of this crate's writers of
//! one thread compare and store one after the other, and the loser sees the winner's checkpoint
//! and stores nothing. Writers of other threads do not wait (two threads whose names hash alike
//! only share the lock's queue). A commit of one link expecting nothing (LangGraph's `put`) is
//! its one statement, atomic without a transaction around it.

use mnemograph_checkpoint::checkpoint::{ChainLink, CheckpointConfig, CheckpointError, Commit, ExpectParent};
use sqlx::{PgConnection, PgPool};

use crate::document::rows;
use crate::error::backend;
use crate::text::{escape, unescape};
use crate::writes::{checkpoint_id, Rows};

/// What tells a stored checkpoint row from another: its document and metadata as the server
/// renders them, hashed. A commit returns it for each link and the read cache compares it.
macro_rules! fingerprint {
    () => {
        "md5(checkpoint::text || metadata::text)"
    };
}
pub(crate) use fingerprint;

/// One link: the writes against its parent, then its blobs, then its checkpoint row, each stored
/// only where `$guard` holds (a condition over the CTEs `$checks` defines first). Written out for
/// the two ways LangGraph stores a batch of writes: keeping what is stored (regular channels) or
/// replacing it (a batch of special channels only). Empty arrays insert nothing. The statement
/// returns the row's fingerprint (`NULL` when nothing was stored) and `$found`.
macro_rules! link_statement {
    ($checks:literal, $guard:literal, $found:literal, $on_write_conflict:literal) => {
        concat!(
            "WITH ",
            $checks,
            "writes AS (
    INSERT INTO checkpoint_writes
        (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
    SELECT $1::text, $2::text, $3::text, $4::text, $5::text, w.idx, w.channel, w.type, w.blob
    FROM UNNEST($6::int4[], $7::text[], $8::text[], $9::bytea[]) AS w(idx, channel, type, blob)
    WHERE ",
            $guard,
            "
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ",
            $on_write_conflict,
            "
), blobs AS (
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT $1::text, $2::text, b.channel, b.version, b.type, b.blob
    FROM UNNEST($10::text[], $11::text[], $12::text[], $13::bytea[]) AS b(channel, version, type, blob)
    WHERE ",
            $guard,
            "
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
), stored AS (
    INSERT INTO checkpoints
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
    SELECT $1::text, $2::text, $14, $3::text, $15::jsonb, $16::jsonb
    WHERE ",
            $guard,
            "
    ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
    DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
    RETURNING ",
            fingerprint!(),
            " AS fingerprint
)
SELECT (SELECT fingerprint FROM stored), ",
            $found
        )
    };
}

/// A link stored unconditionally.
macro_rules! plain_link {
    ($on_write_conflict:literal) => {
        link_statement!("", "TRUE", "CAST(NULL AS text)", $on_write_conflict)
    };
}

/// A link stored only when its parent (`$3`, `NULL` for none) is the latest checkpoint of the
/// namespace, read by the statement itself; it also returns the latest checkpoint's id.
macro_rules! checked_link {
    ($on_write_conflict:literal) => {
        link_statement!(
            "latest AS (
    SELECT checkpoint_id FROM checkpoints
    WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY checkpoint_id DESC LIMIT 1
), ",
            "(SELECT checkpoint_id FROM latest) IS NOT DISTINCT FROM $3::text",
            "(SELECT checkpoint_id FROM latest)",
            $on_write_conflict
        )
    };
}

const LINK_KEEPING_WRITES: &str = plain_link!("DO NOTHING");
const LINK_REPLACING_WRITES: &str =
    plain_link!("DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob");
const CHECKED_LINK_KEEPING_WRITES: &str = checked_link!("DO NOTHING");
const CHECKED_LINK_REPLACING_WRITES: &str =
    checked_link!("DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob");

const LOCK: &str = "SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))";

/// Stores `commit`; returns the address of its last checkpoint and each link's fingerprint.
///
/// Expecting the latest parent, the advisory lock is taken in a statement of its own, and the
/// first link's statement then reads the latest checkpoint itself and stores nothing unless it
/// is the parent: a statement's snapshot is taken when it starts, so that read comes after the
/// lock was granted and sees what the lock waited for.
pub(crate) async fn commit(
    pool: &PgPool,
    commit: &Commit,
) -> Result<(CheckpointConfig, Vec<String>), CheckpointError> {
    if commit.chain.is_empty() {
        return Err(CheckpointError::empty_chain());
    }
    if commit.expect == ExpectParent::Any && commit.chain.len() == 1 {
        let mut conn = pool.acquire().await.map_err(backend)?;
        let fingerprint = put(&mut conn, &commit.parent, &commit.chain[0], false).await?;
        return Ok((commit.last(), vec![fingerprint]));
    }
    let mut tx = pool.begin().await.map_err(backend)?;
    let check = commit.expect == ExpectParent::Latest;
    if check {
        let parent = &commit.parent;
        let (thread_id, checkpoint_ns) = (escape(&parent.thread_id), escape(&parent.checkpoint_ns));
        sqlx::query(LOCK).bind(&thread_id).bind(&checkpoint_ns).execute(&mut *tx).await.map_err(backend)?;
    }
    let mut fingerprints = Vec::with_capacity(commit.chain.len());
    for (i, (parent, link)) in commit.links().enumerate() {
        fingerprints.push(put(&mut tx, &parent, link, check && i == 0).await?);
    }
    tx.commit().await.map_err(backend)?;
    Ok((commit.last(), fingerprints))
}

/// One link's writes, blobs and checkpoint row, in one statement on `conn`; returns the row's
/// fingerprint. With `check`, nothing is stored unless `parent` is the latest checkpoint of its
/// namespace, and a [`CheckpointError::Conflict`] names the latest one found.
async fn put(
    conn: &mut PgConnection,
    parent: &CheckpointConfig,
    link: &ChainLink,
    check: bool,
) -> Result<String, CheckpointError> {
    let (writes, task_id, task_path) = match &link.writes {
        Some(batch) if !batch.writes.is_empty() => {
            checkpoint_id(parent)?;
            (Rows::of(&batch.writes)?, batch.task_id.as_str(), batch.task_path.as_str())
        }
        _ => (Rows::default(), "", ""),
    };
    let rows = rows(&link.checkpoint, &link.metadata, &link.new_versions)?;
    let mut blobs = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (channel, version, kind, bytes) in rows.blobs {
        blobs.0.push(channel);
        blobs.1.push(version);
        blobs.2.push(kind);
        blobs.3.push(bytes);
    }
    let statement = match (check, writes.upsert) {
        (false, false) => LINK_KEEPING_WRITES,
        (false, true) => LINK_REPLACING_WRITES,
        (true, false) => CHECKED_LINK_KEEPING_WRITES,
        (true, true) => CHECKED_LINK_REPLACING_WRITES,
    };
    let (fingerprint, latest): (Option<String>, Option<String>) = sqlx::query_as(statement)
        .bind(escape(&parent.thread_id))
        .bind(escape(&parent.checkpoint_ns))
        .bind(parent.checkpoint_id.as_deref().map(escape))
        .bind(escape(task_id))
        .bind(escape(task_path))
        .bind(&writes.idx)
        .bind(&writes.channels)
        .bind(&writes.kinds)
        .bind(&writes.blobs)
        .bind(&blobs.0)
        .bind(&blobs.1)
        .bind(&blobs.2)
        .bind(&blobs.3)
        .bind(escape(&link.checkpoint.id))
        .bind(&rows.document)
        .bind(&rows.metadata)
        .fetch_one(&mut *conn)
        .await
        .map_err(backend)?;
    match fingerprint {
        Some(fingerprint) => Ok(fingerprint),
        None => Err(CheckpointError::conflict(parent, latest.map(unescape))),
    }
}
