//! [`ConversationLock`]: one round at a time per conversation, across every process sharing the
//! database, with MySQL's named locks (`GET_LOCK('conv_<id>')`).
//!
//! Why a named lock rather than `SELECT … FOR UPDATE` on the conversation row: the lock must be
//! held across the model call (seconds) and must also cover conversations that have no row yet;
//! a row lock needs an open transaction for that long and an existing row. A named lock needs
//! neither, and the server frees it if the holder's connection dies.

use std::time::Duration;

use sqlx::mysql::MySql;
use sqlx::pool::PoolConnection;
use sqlx::MySqlPool;

use crate::error::{Error, Result};

/// Proof that the current round holds its conversation's lock.
///
/// A MySQL named lock belongs to the *session* that took it, so the guard keeps that pooled
/// connection until [`release`](Self::release). If the guard is dropped without it (a panic, a
/// cancelled future) the connection is closed instead of going back to the pool, which makes the
/// server free the lock; a pooled connection still holding it would block the conversation until
/// that connection happened to be closed.
#[derive(Debug)]
pub struct ConversationLock {
    /// The session holding the lock.
    conn: PoolConnection<MySql>,
    /// The conversation.
    conversation_id: String,
    /// Whether the session holds no lock any more and may return to the pool.
    clean: bool,
}

/// The `GET_LOCK` name of a conversation: the thread id, `conv_{conversation_id}`. Named locks
/// are server-wide, not per database, so two databases on one server share them; that only
/// serializes rounds of equal ids, it never lets two run at once.
pub fn lock_name(conversation_id: &str) -> String {
    crate::thread_id(conversation_id)
}

impl ConversationLock {
    /// Waits up to `wait` (rounded up to whole seconds) for the lock of `conversation_id`, on a
    /// connection of `pool` (keep that pool apart from the one doing the round's work, so rounds
    /// waiting here can never take the connections the holder needs to finish).
    ///
    /// # Errors
    /// [`Error::Busy`] when another session held the lock for all of `wait`;
    /// [`Error::Database`] when no connection could be had or the server failed.
    pub async fn acquire(pool: &MySqlPool, conversation_id: &str, wait: Duration) -> Result<Self> {
        let conn = pool.acquire().await?;
        let mut lock = Self { conn, conversation_id: conversation_id.to_owned(), clean: false };
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        // 1 = acquired; 0 (timed out) or NULL (an error, e.g. the wait was killed) = not acquired,
        // reported as busy. On a driver error, or if this future is dropped while the server
        // waits, `lock` is dropped unclean and the connection, which may yet get the lock, is
        // closed.
        let got: Option<i64> = sqlx::query_scalar("SELECT GET_LOCK(?, ?)")
            .bind(lock_name(conversation_id))
            .bind(seconds)
            .fetch_one(&mut *lock.conn)
            .await?;
        if got == Some(1) {
            return Ok(lock);
        }
        // The session holds nothing: its connection may go back to the pool.
        lock.clean = true;
        Err(Error::Busy { conversation_id: conversation_id.to_owned() })
    }

    /// The conversation this lock is for.
    pub fn conversation_id(&self) -> &str {
        &self.conversation_id
    }

    /// Frees the lock and returns the connection to the pool.
    ///
    /// # Errors
    /// [`Error::Database`] when the server could not be told; the connection is then closed,
    /// which frees the lock anyway.
    pub async fn release(mut self) -> Result<()> {
        let released: Option<i64> = sqlx::query_scalar("SELECT RELEASE_LOCK(?)")
            .bind(lock_name(&self.conversation_id))
            .fetch_one(&mut *self.conn)
            .await?;
        // 1 = freed; 0 or NULL would mean this session did not hold it, which the type rules out.
        if released != Some(1) {
            tracing::warn!(conversation_id = %self.conversation_id, ?released, "RELEASE_LOCK found no lock");
        }
        self.clean = true;
        Ok(())
    }
}

impl Drop for ConversationLock {
    fn drop(&mut self) {
        if !self.clean {
            self.conn.close_on_drop();
        }
    }
}
