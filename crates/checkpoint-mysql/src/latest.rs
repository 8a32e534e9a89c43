//! The parent check of `put_expecting_latest`, done inside the put transaction.
//!
//! The check is a locking read (`FOR UPDATE`) of the namespace's checkpoint rows from the expected
//! parent upwards, as the transaction's first statement. Under InnoDB's default `REPEATABLE READ`
//! it takes next-key locks on those rows and on the gap after them, so a second writer of the same
//! thread and namespace waits at its own locking read until the first commits, then reads the
//! first one's row and refuses. Two writers that both find the namespace empty (the first
//! checkpoint of a thread) hold compatible gap locks and then block each other's insert: InnoDB
//! breaks that deadlock by rolling one back, and that one's transaction is run again, where its
//! check now sees the winner's row.
//!
//! The race for the *first* checkpoint of a namespace relies on gap locks, so the check needs
//! `REPEATABLE READ` (the server default; `READ COMMITTED` takes no gap locks). Scanning upwards
//! from the parent rather than reading the newest row means a writer that waited on the parent
//! row's lock reads the rows committed after the parent once it gets the lock.

use graph_core::checkpoint::{CheckpointConfig, CheckpointError};
use sqlx::mysql::MySqlDatabaseError;
use sqlx::{MySql, Transaction};

use crate::error::backend;
use crate::exact::same;
use crate::sql::Layout;

/// Full layout: the expected parent and anything newer, locked; at most two rows are needed to
/// tell "only the parent" from "the parent and a newer one".
/// The thread id is compared exactly (see [`crate::exact`]), so bound twice.
const LOCK_FROM_PARENT: &str = concat!(
    "SELECT checkpoint_id FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND checkpoint_id >= ? ORDER BY checkpoint_id LIMIT 2 FOR UPDATE"
);

/// Full layout: the newest checkpoint id, for the conflict report.
const NEWEST: &str = concat!(
    "SELECT checkpoint_id FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? ORDER BY checkpoint_id DESC LIMIT 1"
);

/// Shallow layout: the namespace's one row, locked; its id is the document's `$.id` (cast: the
/// JSON functions return a binary string on MariaDB).
const LOCK_SHALLOW: &str = concat!(
    "SELECT CAST(JSON_UNQUOTE(JSON_EXTRACT(checkpoint, '$.id')) AS CHAR(150)) FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? FOR UPDATE"
);

/// How many times a put transaction that InnoDB rolled back to break a deadlock is run again.
pub(crate) const DEADLOCK_ATTEMPTS: usize = 5;

/// MySQL's `ER_LOCK_DEADLOCK`.
const ER_LOCK_DEADLOCK: u16 = 1213;

/// Locks the namespace's latest checkpoint and checks that it is `config.checkpoint_id` (`None`:
/// that the namespace has none); [`CheckpointError::Conflict`] otherwise. Must be the first
/// statement of the transaction, so every writer of a namespace takes the locks in one order.
pub(crate) async fn lock_and_check(
    tx: &mut Transaction<'_, MySql>,
    layout: Layout,
    config: &CheckpointConfig,
    hash: &[u8; 16],
) -> Result<(), CheckpointError> {
    let expected = config.checkpoint_id.as_deref();
    let found = match layout {
        Layout::Full => {
            let ids: Vec<String> = sqlx::query_scalar(LOCK_FROM_PARENT)
                .bind(&config.thread_id)
                .bind(&config.thread_id)
                .bind(&hash[..])
                .bind(expected.unwrap_or(""))
                .fetch_all(&mut **tx)
                .await
                .map_err(backend)?;
            if ids.iter().map(String::as_str).eq(expected) {
                return Ok(());
            }
            // The parent is gone or has a successor: report the actual newest.
            sqlx::query_scalar(NEWEST)
                .bind(&config.thread_id)
                .bind(&config.thread_id)
                .bind(&hash[..])
                .fetch_optional(&mut **tx)
                .await
                .map_err(backend)?
        }
        Layout::Shallow => {
            let id: Option<Option<String>> = sqlx::query_scalar(LOCK_SHALLOW)
                .bind(&config.thread_id)
                .bind(&config.thread_id)
                .bind(&hash[..])
                .fetch_optional(&mut **tx)
                .await
                .map_err(backend)?;
            let found = id.flatten();
            if found.as_deref() == expected {
                return Ok(());
            }
            found
        }
    };
    Err(CheckpointError::conflict(config, found))
}

/// Whether `err` is InnoDB rolling the transaction back to break a deadlock: the transaction
/// did nothing and can run again.
pub(crate) fn is_deadlock(err: &CheckpointError) -> bool {
    let CheckpointError::Backend(source) = err else { return false };
    let Some(crate::Error::Sqlx(sqlx)) = source.downcast_ref::<crate::Error>() else { return false };
    let number = sqlx.as_database_error().and_then(|e| e.try_downcast_ref::<MySqlDatabaseError>());
    number.is_some_and(|e| e.number() == ER_LOCK_DEADLOCK)
}
