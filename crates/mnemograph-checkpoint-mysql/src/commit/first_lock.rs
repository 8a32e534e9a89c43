//! The named lock that serializes the writers of a namespace's first checkpoint.
//!
//! A put that expects the namespace to be empty has no parent row to lock; its writers take a
//! named lock (`GET_LOCK`) on the namespace before their transaction begins, and hold it until
//! the commit.

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError};
use sqlx::pool::PoolConnection;
use sqlx::{MySql, MySqlPool};

use crate::error::{backend, Error};

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
