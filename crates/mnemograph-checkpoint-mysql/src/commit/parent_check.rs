//! The parent check of a commit expecting the latest parent, done inside the put transaction.
//!
//! Writers of one thread and namespace must be serialized without locking anything that other
//! threads need. A locking *range* read (`checkpoint_id >= parent ... FOR UPDATE`) would do the
//! first part, but under InnoDB's default `REPEATABLE READ` it also locks the gap after the
//! thread's newest row, and that gap is where the rows of every thread whose id sorts next go:
//! with many new threads at once (ids `load-…-1`, `load-…-10`, …) their inserts deadlock on
//! each other's gap locks far more often than any retry budget covers. So the check takes only
//! locks that belong to the one namespace:
//!
//! - **a parent is expected**: a locking read of exactly that row (`= parent` on the whole
//!   primary key, a record lock and no gap lock), then a plain read of anything newer. A second
//!   writer with the same parent waits at the record lock until the first commits; its plain read
//!   comes after the wait, so its snapshot holds the first writer's checkpoint, and it refuses.
//! - **no parent is expected** (the namespace's first checkpoint): there is no row to lock, so
//!   the writers take a named lock (`GET_LOCK`) on the namespace before their transaction begins
//!   ([`super::first_lock`]), and then check with a plain read that the namespace is empty.
//!
//! A parent that is gone, or a namespace that is not empty, is a [`CheckpointError::Conflict`]
//! naming the newest checkpoint found.
//!
//! On a kept write connection (autocommit off) the check of an expected parent is queued instead,
//! to travel with the `COMMIT` ([`super::check_with_commit`]).

use std::borrow::Cow;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError};
use sqlx::Row as _;

use super::check_with_commit;
use super::newest::{first_id, newest_of_all};
use super::tx::Tx;
use crate::error::backend;
use crate::exact::{same, same_columns};
use crate::sql::Layout;
use crate::statement::{Bind, Statement};
use crate::texts::Texts;

/// Full layout, a parent expected: the parent locked by its whole primary key (a record lock
/// only, `p`), the columns `$texts` of it, and then the newest checkpoint id after it. That one is
/// read by a subquery, which a locking read does not lock (only the tables of its own query block
/// are): a plain read, made once the parent's lock is granted, since it reads the locked row's
/// columns. The thread id is compared exactly (see [`crate::exact`]), so bound twice.
macro_rules! lock_parent {
    ($texts:literal) => {
        concat!(
            "SELECT p.checkpoint_id, ",
            $texts,
            "(SELECT n.checkpoint_id FROM checkpoints AS n WHERE ",
            same_columns!("n.thread_id", "p.thread_id"),
            " AND n.checkpoint_ns_hash = p.checkpoint_ns_hash AND n.checkpoint_id > p.checkpoint_id \
             ORDER BY n.checkpoint_id DESC LIMIT 1) FROM checkpoints AS p WHERE ",
            same!("p.thread_id"),
            " AND p.checkpoint_ns_hash = ? AND p.checkpoint_id = ? FOR UPDATE"
        )
    };
}

/// [`lock_parent!`] reading the parent's id and the newest id after it.
const LOCK_PARENT: &str = lock_parent!("");

/// [`LOCK_PARENT`] also reading the parent's texts (columns 1 and 2, the newest id after them),
/// to compare with what this saver stored (see [`lock_and_check`]).
const LOCK_PARENT_TEXTS: &str = lock_parent!("CAST(p.checkpoint AS CHAR), CAST(p.metadata AS CHAR), ");

/// Shallow layout: the namespace's one row (its whole primary key), locked when `FOR UPDATE` is
/// appended; its id is the document's `$.id` (cast: the JSON functions return a binary string on
/// MariaDB).
const SHALLOW_ID: &str = concat!(
    "SELECT CAST(JSON_UNQUOTE(JSON_EXTRACT(checkpoint, '$.id')) AS CHAR(150)) FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ?"
);

/// Checks that the namespace's latest checkpoint is `config.checkpoint_id` (`None`: that the
/// namespace has none, with the caller holding its
/// [`FirstCheckpointLock`](super::first_lock::FirstCheckpointLock)), locking the parent row when
/// there is one; [`CheckpointError::Conflict`] otherwise. Must be the first statement of the
/// transaction, so the snapshot of its plain reads is taken after the lock wait (the reads
/// are one script with `BEGIN`, run in order by the server).
///
/// With `texts`, the parent's row must also still hold them (what this saver stored, which a run
/// may have started from without reading it back): a row rewritten in place since is refused
/// like a moved parent, since what is put was computed from the row as it was.
pub(crate) async fn lock_and_check(
    tx: &mut Tx,
    layout: Layout,
    config: &CheckpointConfig,
    hash: &[u8; 16],
    texts: Option<&Texts>,
) -> Result<(), CheckpointError> {
    let expected = config.checkpoint_id.as_deref();
    // Every read here starts with the thread (compared exactly, so twice) and the namespace hash.
    let by_thread = |text: Cow<'static, str>| Statement::by_thread(text, &config.thread_id, *hash);
    let found = match layout {
        Layout::Full => {
            let newest = || newest_of_all(config, hash);
            match expected {
                // With autocommit off, the check travels with the COMMIT (see `check_with_commit`).
                Some(parent) if tx.defers_checks() => {
                    return check_with_commit::queue(tx, config, hash, parent, texts).await;
                }
                // One statement: the lock, then the plain read, which sees what the lock waited for.
                Some(parent) => {
                    let mut lock =
                        by_thread(if texts.is_some() { LOCK_PARENT_TEXTS } else { LOCK_PARENT }.into());
                    lock.push(Bind::Text(parent));
                    let rows = tx.fetch(&[lock]).await.map_err(backend)?.pop().unwrap_or_default();
                    match rows.first() {
                        Some(locked) => {
                            if let Some(texts) = texts {
                                if !texts.match_row(locked)? {
                                    return Err(CheckpointError::conflict(config, Some(parent.to_owned())));
                                }
                            }
                            let newer: Option<String> =
                                locked.try_get(if texts.is_some() { 3 } else { 1 }).map_err(backend)?;
                            match newer {
                                None => return Ok(()),
                                newer => newer,
                            }
                        }
                        // The parent is gone: report the actual newest.
                        None => first_id(
                            &tx.fetch(&[newest()]).await.map_err(backend)?.pop().unwrap_or_default(),
                        )?,
                    }
                }
                // Without a parent there is no row to lock (the caller holds the named lock), and
                // anything stored is newer.
                None => {
                    match first_id(&tx.fetch(&[newest()]).await.map_err(backend)?.pop().unwrap_or_default())?
                    {
                        None => return Ok(()),
                        found => found,
                    }
                }
            }
        }
        Layout::Shallow => {
            // With a parent expected, its row exists unless there is a conflict: lock it. The
            // first checkpoint is guarded by the named lock, and a plain read is enough.
            let text =
                if expected.is_some() { format!("{SHALLOW_ID} FOR UPDATE") } else { SHALLOW_ID.to_owned() };
            let found = first_id(
                &tx.fetch(&[by_thread(text.into())]).await.map_err(backend)?.pop().unwrap_or_default(),
            )?;
            if found.as_deref() == expected {
                return Ok(());
            }
            found
        }
    };
    Err(CheckpointError::conflict(config, found))
}
