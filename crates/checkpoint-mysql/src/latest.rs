//! The parent check of `put_expecting_latest`, done inside the put transaction.
//!
//! Writers of one thread and namespace must be serialized without locking anything that other
//! threads need. A locking *range* read (`checkpoint_id >= parent ... FOR UPDATE`) would do the
//! first part, but under InnoDB's default `REPEATABLE READ` it also locks the gap after the
//! thread's newest row, and that gap is where the rows of every thread whose id sorts next go:
//! with a hundred new threads at once (ids `load-…-1`, `load-…-10`, …) their inserts deadlock on
//! each other's gap locks far more often than any retry budget covers. So the check takes only
//! locks that belong to the one namespace:
//!
//! - **a parent is expected**: a locking read of exactly that row (`= parent` on the whole
//!   primary key, a record lock and no gap lock), then a plain read of anything newer. A second
//!   writer with the same parent waits at the record lock until the first commits; its plain read
//!   comes after the wait, so its snapshot holds the first writer's checkpoint, and it refuses.
//! - **no parent is expected** (the namespace's first checkpoint): there is no row to lock, so
//!   the writers take a named lock (`GET_LOCK`) on the namespace before their transaction begins
//!   ([`FirstCheckpointLock`]), and then check with a plain read that the namespace is empty.
//!
//! A parent that is gone, or a namespace that is not empty, is a [`CheckpointError::Conflict`]
//! naming the newest checkpoint found.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use graph_core::checkpoint::{CheckpointConfig, CheckpointError};
use sqlx::mysql::MySqlDatabaseError;
use sqlx::mysql::MySqlRow;
use sqlx::pool::PoolConnection;
use sqlx::{MySql, MySqlPool, Row as _};

use crate::deferred::{self, Failure};
use crate::error::{backend, Error};
use crate::exact::{same, same_columns};
use crate::recent::Texts;
use crate::script::{Bind, Statement};
use crate::sql::Layout;
use crate::tx::Tx;
use crate::writers::{Lease, Writers};

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

/// Full layout: the newest checkpoint id after the one bound (`''`: the newest of all), as a
/// plain read.
const NEWEST_AFTER: &str = concat!(
    "SELECT checkpoint_id FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND checkpoint_id > ? ORDER BY checkpoint_id DESC LIMIT 1"
);

/// Shallow layout: the namespace's one row (its whole primary key), locked when `FOR UPDATE` is
/// appended; its id is the document's `$.id` (cast: the JSON functions return a binary string on
/// MariaDB).
const SHALLOW_ID: &str = concat!(
    "SELECT CAST(JSON_UNQUOTE(JSON_EXTRACT(checkpoint, '$.id')) AS CHAR(150)) FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ?"
);

/// How many times a put transaction that InnoDB rolled back to break a deadlock is run again.
pub(crate) const DEADLOCK_ATTEMPTS: usize = 8;

/// MySQL's `ER_LOCK_DEADLOCK`.
const ER_LOCK_DEADLOCK: u16 = 1213;

/// How long a writer of a namespace's first checkpoint waits for another one.
const FIRST_LOCK_WAIT: Duration = Duration::from_secs(30);

/// The named lock of a namespace: its name is the MD5 of database, thread id and namespace, so it
/// fits `GET_LOCK`'s 64 characters whatever the ids hold, and two databases on one server do
/// not wait for each other.
const LOCK_NAME: &str = "CONCAT('graph-rs:first:', MD5(CONCAT_WS(0x00, DATABASE(), ?, ?)))";

/// A pooled connection that holds the named lock of one namespace's first checkpoint; the put
/// transaction runs on it, and the lock is released after the commit.
///
/// A named lock belongs to the server session, not to the transaction: a connection handed back
/// to the pool still holding it would block every later first writer of that namespace. So a
/// guard dropped without [`release`](Self::release) (a cancelled put) closes its connection,
/// and the server frees the lock with the session.
pub(crate) struct FirstCheckpointLock {
    /// `None` once released.
    conn: Option<PoolConnection<MySql>>,
}

impl FirstCheckpointLock {
    /// Waits for the lock of `config`'s namespace.
    ///
    /// # Errors
    /// [`Error::WriterLock`] when another writer holds it longer than [`FIRST_LOCK_WAIT`]; the
    /// driver's error when the statement fails.
    pub(crate) async fn acquire(
        pool: &MySqlPool,
        config: &CheckpointConfig,
    ) -> Result<Self, CheckpointError> {
        // Guarded from before the statement is sent: a put cancelled while it waits must not
        // leave a pooled session that is granted the lock later.
        let mut guard = Self { conn: Some(pool.acquire().await.map_err(backend)?) };
        let got: Option<i64> = sqlx::query_scalar(&format!("SELECT GET_LOCK({LOCK_NAME}, ?)"))
            .bind(&config.thread_id)
            .bind(&config.checkpoint_ns)
            .bind(FIRST_LOCK_WAIT.as_secs())
            .fetch_one(&mut **guard.conn.as_mut().ok_or_else(|| backend(sqlx::Error::PoolClosed))?)
            .await
            .map_err(backend)?;
        if got != Some(1) {
            // Nothing is held: the connection can go back to the pool.
            guard.conn.take();
            return Err(Error::WriterLock {
                thread_id: config.thread_id.clone(),
                seconds: FIRST_LOCK_WAIT.as_secs(),
            }
            .into());
        }
        Ok(guard)
    }

    /// The connection that holds the lock, to run the put transaction on; [`restore`](Self::restore)
    /// gives it back.
    pub(crate) fn take(&mut self) -> Option<PoolConnection<MySql>> {
        self.conn.take()
    }

    /// Gives back the connection [`take`](Self::take) lent.
    pub(crate) fn restore(&mut self, conn: PoolConnection<MySql>) {
        self.conn = Some(conn);
    }

    /// Releases the lock and hands the connection back to the pool. The checkpoint is committed
    /// by then, so a failure here is not the put's: the connection is closed instead, which
    /// releases the lock too.
    pub(crate) async fn release(mut self, config: &CheckpointConfig) {
        let Some(mut conn) = self.conn.take() else { return };
        let released = sqlx::query(&format!("DO RELEASE_LOCK({LOCK_NAME})"))
            .bind(&config.thread_id)
            .bind(&config.checkpoint_ns)
            .execute(&mut *conn)
            .await;
        if let Err(e) = released {
            tracing::warn!(error = %e, thread_id = %config.thread_id, "RELEASE_LOCK failed; closing the connection");
            drop(conn.detach());
        }
    }
}

impl Drop for FirstCheckpointLock {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            // Detached, the connection is closed rather than pooled: the server ends the session
            // and frees the lock.
            drop(conn.detach());
        }
    }
}

/// Checks that the namespace's latest checkpoint is `config.checkpoint_id` (`None`: that the
/// namespace has none, with the caller holding its [`FirstCheckpointLock`]), locking the parent
/// row when there is one; [`CheckpointError::Conflict`] otherwise. Must be the first statement of
/// the transaction, so the snapshot of its plain reads is taken after the lock wait (the reads
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
                // With autocommit off, the check travels with the COMMIT (see `deferred`).
                Some(parent) if tx.defers_checks() => {
                    return deferred::queue(tx, config, hash, parent, texts).await;
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

/// The read of the newest checkpoint id of `config`'s namespace (`hash`), as a plain read.
pub(crate) fn newest_of_all<'a>(config: &'a CheckpointConfig, hash: &[u8; 16]) -> Statement<'a> {
    let mut newest = Statement::by_thread(NEWEST_AFTER, &config.thread_id, *hash);
    // `''` sorts before every id.
    newest.push(Bind::Text(""));
    newest
}

/// The first column of the first of `rows`, a checkpoint id (`None`: no row, or NULL).
pub(crate) fn first_id(rows: &[MySqlRow]) -> Result<Option<String>, CheckpointError> {
    match rows.first() {
        Some(row) => row.try_get::<Option<String>, _>(0).map_err(backend),
        None => Ok(None),
    }
}

/// Whether `err` is InnoDB rolling the transaction back to break a deadlock: the transaction
/// did nothing and can run again.
pub(crate) fn is_deadlock(err: &CheckpointError) -> bool {
    let CheckpointError::Backend(source) = err else { return false };
    let Some(crate::Error::Sqlx(sqlx)) = source.downcast_ref::<crate::Error>() else { return false };
    let number = sqlx.as_database_error().and_then(|e| e.try_downcast_ref::<MySqlDatabaseError>());
    number.is_some_and(|e| e.number() == ER_LOCK_DEADLOCK)
}

/// A short random pause before running a deadlocked transaction again, growing with `attempt`,
/// so the writers that deadlocked do not meet again at once.
pub(crate) async fn backoff(attempt: usize) {
    let millis = rand::random_range(1..=2u64 << attempt.min(6));
    tokio::time::sleep(Duration::from_millis(millis)).await;
}

/// The statements of a put after the parent check, run in the put's transaction.
pub(crate) type Body<'t, T> = Pin<Box<dyn Future<Output = Result<T, CheckpointError>> + Send + 't>>;

/// Runs `body` as one put transaction of `layout`: with `expect_latest`, the parent check (and,
/// for a namespace's first checkpoint, its [`FirstCheckpointLock`]) comes first, comparing the
/// parent's row with `texts` when given (see [`lock_and_check`]). A transaction
/// that InnoDB rolled back to break a deadlock did nothing, and is run again after a short pause,
/// up to [`DEADLOCK_ATTEMPTS`] times.
///
/// `body` gets what it stores as `data` rather than capturing it, so that the future it returns
/// borrows both for one lifetime. What it queues on the [`Tx`] is sent with the `COMMIT`.
pub(crate) async fn put_transaction<D: Sync, T>(
    writers: &Writers,
    layout: Layout,
    config: &CheckpointConfig,
    expect_latest: bool,
    texts: Option<&Texts>,
    data: &D,
    mut body: impl for<'t> FnMut(&'t mut Tx, &'t D) -> Body<'t, T>,
) -> Result<T, CheckpointError> {
    let hash = crate::write::ns_hash(&config.checkpoint_ns);
    // A put that expects the namespace to be empty waits for the namespace's named lock.
    let mut first = match expect_latest && config.checkpoint_id.is_none() {
        true => Some(FirstCheckpointLock::acquire(writers.pool(), config).await?),
        false => None,
    };
    let conn = match first.as_mut().and_then(FirstCheckpointLock::take) {
        Some(conn) => Lease::Pooled(conn),
        None => writers.acquire().await.map_err(backend)?,
    };
    let mut tx = Tx::new(conn);
    let mut attempt = 1;
    let result = loop {
        tx.begin();
        // The statements `body` queued go with the COMMIT, so a deadlock can surface there too.
        let written = async {
            if expect_latest {
                lock_and_check(&mut tx, layout, config, &hash, texts).await?;
            }
            let value = body(&mut tx, data).await?;
            tx.commit().await.map_err(backend)?;
            Ok(value)
        }
        .await;
        match written {
            Ok(value) => break Ok(value),
            Err(e) => {
                tx.rollback().await;
                match deferred::failure(&tx) {
                    Some(Failure::Moved) => {
                        break Err(deferred::conflict(writers.pool(), config, &hash).await)
                    }
                    Some(Failure::Busy) => {
                        // Another writer holds the parent: wait for it, outside the COMMIT's script.
                        tx.wait_for_checks();
                        continue;
                    }
                    None => {}
                }
                if !(is_deadlock(&e) && attempt < DEADLOCK_ATTEMPTS) {
                    break Err(e);
                }
                tracing::debug!(attempt, thread_id = %config.thread_id, "put deadlocked; retrying");
                backoff(attempt).await;
                attempt += 1;
            }
        }
    };
    // A connection that may hold an open transaction is closed, which frees the lock too.
    match (first, tx.into_connection()) {
        (Some(mut lock), Some(Lease::Pooled(conn))) => {
            lock.restore(conn);
            lock.release(config).await;
        }
        (None, Some(lease)) => writers.release(lease),
        _ => {}
    }
    result
}
