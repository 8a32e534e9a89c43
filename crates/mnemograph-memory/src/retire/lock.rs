//! Per-user async locks that serialize read-modify-write of a memory's metadata within a process.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex as SyncMutex, PoisonError, Weak};

use futures_util::lock::{Mutex, OwnedMutexGuard};

/// One async mutex per user id, shared by the clones of the memory value that owns it.
///
/// The map holds [`Weak`] handles only: a user's mutex lives while some call holds or awaits it,
/// and its entry is removed when the last such call ends (see [`UserGuard`]'s `Drop`). So the map
/// has at most one entry per user *with a call in flight*, however many users a long-running
/// process has served.
#[derive(Clone, Default)]
pub struct UserLocks {
    /// User id → that user's mutex, while someone holds a strong reference to it. A std mutex:
    /// it is held only for a lookup or an insert, never across an `.await`.
    map: Arc<SyncMutex<HashMap<String, Weak<Mutex<()>>>>>,
}

impl fmt::Debug for UserLocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserLocks").field("users_in_flight", &self.len()).finish()
    }
}

/// Holds one user's lock; dropping it releases the lock and forgets the user when no other call
/// waits for it.
pub struct UserGuard {
    /// The held lock; taken in `drop` so the mutex's strong count falls before the map is pruned.
    guard: Option<OwnedMutexGuard<()>>,
    /// The registry to prune.
    locks: UserLocks,
    /// Whose lock this is.
    user: String,
}

impl UserLocks {
    /// Waits until no other call of this registry holds `user`'s lock, then holds it until the
    /// guard is dropped. Users do not block one another.
    pub async fn lock(&self, user: &str) -> UserGuard {
        let mutex = {
            // A panic while the map was locked cannot leave it inconsistent (every update is a
            // single insert or remove), so a poisoned map is used as is.
            let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
            match map.get(user).and_then(Weak::upgrade) {
                Some(m) => m,
                None => {
                    let m = Arc::new(Mutex::new(()));
                    map.insert(user.to_owned(), Arc::downgrade(&m));
                    m
                }
            }
        };
        let guard = mutex.lock_owned().await;
        UserGuard { guard: Some(guard), locks: self.clone(), user: user.to_owned() }
    }

    /// Users with a call holding or awaiting their lock.
    pub(crate) fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl fmt::Debug for UserGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserGuard").field("user", &self.user).finish_non_exhaustive()
    }
}

impl Drop for UserGuard {
    fn drop(&mut self) {
        // Release first: the guard owns a strong reference, and the entry may only go once none
        // is left. A call that upgraded the entry meanwhile keeps it alive, so the check below
        // leaves its entry (or the fresh one it inserted) in place.
        drop(self.guard.take());
        let mut map = self.locks.map.lock().unwrap_or_else(PoisonError::into_inner);
        if map.get(&self.user).is_some_and(|w| w.strong_count() == 0) {
            map.remove(&self.user);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_users_lock_is_exclusive_and_forgotten_when_released() {
        let locks = UserLocks::default();
        let held = locks.lock("ann").await;
        // Another user is not blocked by ann.
        let bob = locks.lock("bob").await;
        assert_eq!(locks.len(), 2);
        // A second lock for ann waits until the first is released.
        let shared = locks.clone();
        let waiter = tokio::spawn(async move { shared.lock("ann").await });
        tokio::task::yield_now().await;
        assert!(!waiter.is_finished(), "ann's second lock must wait");
        drop(held);
        let second = waiter.await.unwrap();
        // The waiter's entry survives the first guard's drop.
        assert_eq!(locks.len(), 2);
        drop((second, bob));
        assert_eq!(locks.len(), 0, "released users are forgotten");
    }
}
