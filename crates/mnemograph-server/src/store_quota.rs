//! [`StoreWrites`]: puts of one caller's new store items, one at a time in this process, so that
//! the count a quota check reads cannot be passed by the caller's other puts in flight.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// A lock per caller with store puts in flight.
#[derive(Debug, Default)]
pub(crate) struct StoreWrites {
    /// By identity; an entry outlives its last holder only until the next lookup prunes it.
    locks: Mutex<HashMap<String, Weak<AsyncMutex<()>>>>,
}

impl StoreWrites {
    /// Waits until none of `identity`'s other checked puts is in flight; holds its turn until
    /// the guard is dropped.
    pub(crate) async fn turn(&self, identity: &str) -> OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(PoisonError::into_inner);
            locks.retain(|_, lock| lock.strong_count() > 0);
            match locks.get(identity).and_then(Weak::upgrade) {
                Some(lock) => lock,
                None => {
                    let lock = Arc::new(AsyncMutex::new(()));
                    locks.insert(identity.to_owned(), Arc::downgrade(&lock));
                    lock
                }
            }
        };
        lock.lock_owned().await
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn one_callers_turns_follow_each_other_and_other_callers_do_not_wait() {
        let writes = Arc::new(StoreWrites::default());
        let alice = writes.turn("alice").await;
        let waiting = tokio::spawn({
            let writes = writes.clone();
            async move { drop(writes.turn("alice").await) }
        });
        tokio::time::timeout(Duration::from_secs(1), writes.turn("bob")).await.expect("bob does not wait");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!waiting.is_finished(), "alice's second put waits for her first");
        drop(alice);
        tokio::time::timeout(Duration::from_secs(1), waiting).await.expect("then goes").unwrap();
        assert!(writes.locks.lock().unwrap().values().all(|l| l.strong_count() == 0));
    }
}
