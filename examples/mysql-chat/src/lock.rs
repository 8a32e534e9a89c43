//! [`ConversationLock`]: one round at a time per conversation, across every process sharing the
//! database, with MySQL's named locks (`GET_LOCK('conv_<id>')`).
//!
//! Why a named lock rather than `SELECT … FOR UPDATE` on the conversation row: the lock must be
//! held across the model call (seconds) and must also cover conversations that have no row yet;
//! a row lock needs an open transaction for that long and an existing row. A named lock needs
//! neither, and the server frees it if the holder's connection dies.
//!
//! Before a round asks MySQL, it waits its turn in the process ([`ConversationQueues`]): a burst
//! of requests on one conversation then holds one lock connection, not one per request, so it
//! cannot take the lock pool from every other conversation.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use sqlx::mysql::MySql;
use sqlx::pool::PoolConnection;
use sqlx::MySqlPool;
use tokio::sync::OwnedMutexGuard;

use crate::error::{Error, Result};

/// One async mutex per conversation with rounds in this process, so that at most one round per
/// conversation and process takes a lock connection and waits in `GET_LOCK`; the others wait
/// here, holding nothing. An entry lives while some round holds or awaits it.
#[derive(Debug, Default)]
pub struct ConversationQueues {
    /// The conversations with a round in flight.
    entries: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// A round's place in its conversation's queue: its turn once [`ConversationQueues::wait`]
/// returned it. Dropping it hands the turn on, and removes the entry when nobody else uses it.
#[derive(Debug)]
pub struct QueueTurn<'a> {
    /// Where the entry lives.
    queues: &'a ConversationQueues,
    /// The conversation.
    conversation_id: String,
    /// The conversation's mutex, counted while this turn exists.
    entry: Arc<tokio::sync::Mutex<()>>,
    /// Held once the turn came.
    guard: Option<OwnedMutexGuard<()>>,
}

impl ConversationQueues {
    /// Waits up to `wait` until no other round of `conversation_id` in this process is ahead.
    ///
    /// # Errors
    /// [`Error::Busy`] when the rounds ahead took all of `wait`.
    pub async fn wait(&self, conversation_id: &str, wait: Duration) -> Result<QueueTurn<'_>> {
        let entry = {
            let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
            Arc::clone(entries.entry(conversation_id.to_owned()).or_default())
        };
        // Built before waiting, so that a timeout or a cancelled wait still removes an entry
        // nobody else needs.
        let mut turn =
            QueueTurn { queues: self, conversation_id: conversation_id.to_owned(), entry, guard: None };
        match tokio::time::timeout(wait, Arc::clone(&turn.entry).lock_owned()).await {
            Ok(guard) => {
                turn.guard = Some(guard);
                Ok(turn)
            }
            Err(_) => Err(Error::Busy { conversation_id: conversation_id.to_owned() }),
        }
    }

    /// How many conversations have a round holding or awaiting its turn.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether no round holds or awaits a turn.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for QueueTurn<'_> {
    fn drop(&mut self) {
        // Every clone of an entry is made under this mutex, so the count read under it is exact:
        // 2 means the map and this turn, nobody waiting.
        let mut entries = self.queues.entries.lock().unwrap_or_else(PoisonError::into_inner);
        drop(self.guard.take());
        if Arc::strong_count(&self.entry) == 2 {
            entries.remove(&self.conversation_id);
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_turn_per_conversation_and_entries_go_when_unused() {
        let queues = ConversationQueues::default();
        let first = queues.wait("a", Duration::from_secs(1)).await.unwrap();
        // Another conversation is not held up.
        let other = queues.wait("b", Duration::from_millis(10)).await.unwrap();
        assert_eq!(queues.len(), 2);
        let blocked = queues.wait("a", Duration::from_millis(20)).await;
        assert!(matches!(blocked, Err(Error::Busy { .. })), "{blocked:?}");
        drop(other);
        assert_eq!(queues.len(), 1, "the timed-out wait left no entry behind");

        let waiting = queues.wait("a", Duration::from_secs(5));
        tokio::pin!(waiting);
        assert!(futures_util::FutureExt::now_or_never(waiting.as_mut()).is_none());
        drop(first);
        let second = waiting.await.unwrap();
        assert_eq!(queues.len(), 1, "the waiter kept the entry");
        drop(second);
        assert!(queues.is_empty());
    }
}
