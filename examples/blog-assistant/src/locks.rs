//! [`ThreadLocks`]: one round at a time per thread, within this process.
//!
//! Two requests on one thread at once would otherwise both start from the same checkpoint: on a
//! cold thread both rebuild it from the archive and the second rebuild is refused as a conflict;
//! on a warm one the round that commits second is refused. Queuing them makes the second
//! request see what the first wrote (the rebuilt thread, the first answer), so both are
//! answered, in order. Across several processes the checkpointer's own check still refuses the
//! later commit, and a refused round commits nothing (see [`crate::snapshot`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OwnedMutexGuard;

/// A lock per thread id, created on first use and dropped once nobody holds or waits for it.
#[derive(Debug, Default)]
pub struct ThreadLocks {
    /// The locks of threads that someone holds or waits for (plus, until the next `lock`
    /// call, those just released).
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Holds a thread's lock until dropped.
pub type ThreadGuard = OwnedMutexGuard<()>;

impl ThreadLocks {
    /// Waits until no other round holds `thread_id`, then holds it until the guard is dropped.
    pub async fn lock(&self, thread_id: &str) -> ThreadGuard {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
            // Only the map holds a lock nobody uses: forget those, so the map stays as small
            // as the number of busy threads.
            locks.retain(|_, l| Arc::strong_count(l) > 1);
            Arc::clone(locks.entry(thread_id.to_owned()).or_default())
        };
        lock.lock_owned().await
    }

    /// How many threads have a lock entry (busy ones, and ones released since the last `lock`).
    pub fn len(&self) -> usize {
        self.locks.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether no thread has a lock entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_thread_is_held_by_one_round_at_a_time_and_others_are_free() {
        let locks = Arc::new(ThreadLocks::default());
        let first = locks.lock("a").await;
        // Another thread is not blocked.
        drop(tokio::time::timeout(Duration::from_secs(1), locks.lock("b")).await.unwrap());
        // The same thread waits until the first guard is dropped.
        let waiting = tokio::spawn({
            let locks = Arc::clone(&locks);
            async move { drop(locks.lock("a").await) }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "a second round ran while the first held the thread");
        drop(first);
        tokio::time::timeout(Duration::from_secs(1), waiting).await.unwrap().unwrap();
        // Released locks are forgotten on the next use.
        drop(locks.lock("c").await);
        assert!(locks.len() <= 1, "{}", locks.len());
    }
}
