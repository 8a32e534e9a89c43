//! The parent check of a put on a connection with autocommit off, queued to travel with the
//! `COMMIT` instead of being read back first.
//!
//! On a kept write connection (see [`super::connections`]) a transaction begins with its first
//! statement, so the statements that must run prepared (a long conversation's messages) go first,
//! and everything else, parent check included, follows in the one script that ends with `COMMIT`:
//! a put is two round trips instead of three. The server runs a script's statements in order and
//! stops at the first that fails, so the check must *fail* when the parent is not the latest,
//! rather than return something to look at:
//!
//! one statement adds whether the check failed to the largest `BIGINT UNSIGNED`: `0` leaves it as
//! it is, `1` overflows, which both MySQL and MariaDB report as error 1690 in every SQL mode. It
//! first reads the parent row with a lock, by its whole primary key (a record lock only, as in
//! [`super::parent_check`]), then, with a plain read, whether anything newer exists; that read
//! comes after the lock was granted, so it sees what the lock waited for.
//!
//! When the check fails the transaction is rolled back, and the newest checkpoint is read for the
//! [`CheckpointError::Conflict`], as a failed check of [`super::parent_check`] reports it.
//!
//! The lock is taken with `NOWAIT`: when another writer holds it, the put is rolled back and run
//! again with the check of [`super::parent_check`], which waits for the lock in a round trip of
//! its own before anything is sent with a `COMMIT`. A put cancelled while it waits for a lock
//! then commits nothing; waiting inside the script that ends with `COMMIT` would commit it after
//! its caller gave up.

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError};
use sqlx::MySqlPool;

use super::newest::{first_id, newest_of_all};
use super::tx::{Mark, Tx};
use crate::error::backend;
use crate::exact::same;
use crate::lock_error::LockError;
use crate::script::fetch_together;
use crate::statement::{Bind, Statement};
use crate::texts::Texts;

/// The check, one statement: an overflow (error 1690) unless the parent's row exists (`$texts`:
/// and holds the texts whose MD5 digests are bound) and no newer checkpoint does. The parent is
/// read first, by a locking subquery on its whole primary key (a record lock, or an error at once
/// when another transaction holds it: `NOWAIT`); the newer checkpoints after it, by a plain read.
/// The thread id is compared exactly (see [`crate::exact`]), so bound twice each time.
macro_rules! check_parent {
    ($texts:literal) => {
        concat!(
            "SELECT 18446744073709551615 + ((SELECT COUNT(*) FROM checkpoints WHERE ",
            same!("thread_id"),
            " AND checkpoint_ns_hash = ? AND checkpoint_id = ?",
            $texts,
            " FOR UPDATE NOWAIT) = 0 OR EXISTS (SELECT 1 FROM checkpoints WHERE ",
            same!("thread_id"),
            " AND checkpoint_ns_hash = ? AND checkpoint_id > ?)) INTO @graph_rs_parent_check"
        )
    };
}

/// [`check_parent!`] of the parent's existence and the namespace's newer checkpoints.
const CHECK_PARENT: &str = check_parent!("");

/// [`CHECK_PARENT`] also comparing the parent row's texts with what this saver stored.
const CHECK_PARENT_TEXTS: &str =
    check_parent!(" AND UNHEX(MD5(checkpoint)) = ? AND UNHEX(MD5(metadata)) = ?");

/// MySQL's `ER_DATA_OUT_OF_RANGE`, the error of a failed [`check_parent!`].
pub(crate) const ER_DATA_OUT_OF_RANGE: u16 = 1690;

/// Why a transaction with a queued parent check failed, when it was the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Another transaction holds the parent's lock: the put is run again, waiting for it before
    /// anything is committed (so a put cancelled while it waits commits nothing).
    Busy,
    /// The parent is not the latest checkpoint (or its row changed): a conflict.
    Moved,
}

/// What the failure of `tx`'s last transaction means, if it was the queued parent check's.
pub(crate) fn failure(tx: &Tx) -> Option<Failure> {
    match tx.failed_mark()? {
        (Mark::ParentCheck, number) if LockError::of_number(number) == Some(LockError::Busy) => {
            Some(Failure::Busy)
        }
        (Mark::ParentCheck, ER_DATA_OUT_OF_RANGE) => Some(Failure::Moved),
        _ => None,
    }
}

/// Queues on `tx` the check that `parent`, locked, is the latest checkpoint of `config`'s
/// namespace (and, with `texts`, that its row holds them); [`failure`] tells afterwards whether
/// and why it failed.
pub(crate) async fn queue(
    tx: &mut Tx,
    config: &CheckpointConfig,
    hash: &[u8; 16],
    parent: &str,
    texts: Option<&Texts>,
) -> Result<(), CheckpointError> {
    let thread = config.thread_id.as_str();
    let digests = texts.map(Texts::md5);
    let mut check =
        Statement::by_thread(if texts.is_some() { CHECK_PARENT_TEXTS } else { CHECK_PARENT }, thread, *hash);
    check.push(Bind::Text(parent));
    if let Some([document, metadata]) = digests {
        check.push(Bind::Hash(document)).push(Bind::Hash(metadata));
    }
    check.push(Bind::Text(thread)).push(Bind::Text(thread)).push(Bind::Hash(*hash)).push(Bind::Text(parent));
    tx.queue_marked(&check, Mark::ParentCheck).await.map_err(backend)
}

/// The conflict a failed check means: naming the namespace's newest checkpoint, read now.
pub(crate) async fn conflict(
    pool: &MySqlPool,
    config: &CheckpointConfig,
    hash: &[u8; 16],
) -> CheckpointError {
    let rows = async {
        let mut conn = pool.acquire().await?;
        fetch_together(&mut conn, &[newest_of_all(config, hash)]).await
    };
    match rows.await.map_err(backend).and_then(|mut rows| first_id(&rows.pop().unwrap_or_default())) {
        Ok(newest) => CheckpointError::conflict(config, newest),
        Err(e) => e,
    }
}
