//! The last stored value of each delta channel, per thread: what the next `put` diffs against.
//!
//! A delta is only ever written against a value this saver (or a clone) wrote or read itself, so
//! it never has to read the base back from the database while saving. The engine reads a
//! thread's latest checkpoint before it runs, so in practice the entry is there; when it is not
//! (evicted, another process wrote the thread, a new saver), the next value is stored as a full
//! snapshot, which is always correct.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A list value as stored for one version of a channel.
#[derive(Debug, Clone)]
pub(crate) struct Stored {
    /// The version it is stored under.
    pub(crate) version: String,
    /// The snapshot its delta chain ends at (its own version for a snapshot).
    pub(crate) root: String,
    /// Deltas between `root` and this version (0 for a snapshot).
    pub(crate) depth: u32,
    /// Items in the list.
    pub(crate) count: u64,
    /// The list's msgpack, shared with whoever produced it.
    pub(crate) list: Arc<[u8]>,
    /// Length of the array header at the start of `list`.
    pub(crate) header_len: usize,
}

impl Stored {
    /// The items' bytes.
    pub(crate) fn items(&self) -> &[u8] {
        &self.list[self.header_len..]
    }
}

/// `(checkpoint_ns, channel)`.
type Slot = (String, String);

/// The entries and their bookkeeping.
#[derive(Debug, Default)]
struct Inner {
    /// Per thread, so forgetting a thread is one removal.
    threads: HashMap<String, HashMap<Slot, (Stored, u64)>>,
    /// Sum of the entries' list lengths.
    bytes: usize,
    /// Incremented on every access; an entry's copy says when it was last used.
    clock: u64,
}

/// A byte-bounded, least-recently-used map from `(thread, ns, channel)` to the stored list.
#[derive(Debug)]
pub(crate) struct Cache {
    /// A std mutex: held only for map operations, never across an await.
    inner: Mutex<Inner>,
    /// Upper bound on the summed list sizes.
    budget: usize,
}

impl Cache {
    /// An empty cache holding at most `budget` bytes of lists.
    pub(crate) fn new(budget: usize) -> Self {
        Self { inner: Mutex::default(), budget }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The map stays consistent whatever panicked while holding it: every update is a single
        // insert or remove plus a counter.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entry for a channel of a thread, marked as used.
    pub(crate) fn get(&self, thread_id: &str, ns: &str, channel: &str) -> Option<Stored> {
        let mut inner = self.lock();
        inner.clock += 1;
        let now = inner.clock;
        let slots = inner.threads.get_mut(thread_id)?;
        let (stored, used) = slots.get_mut(&(ns.to_owned(), channel.to_owned()))?;
        *used = now;
        Some(stored.clone())
    }

    /// Records what is now stored for a channel, replacing the previous entry.
    pub(crate) fn put(&self, thread_id: &str, ns: &str, channel: &str, stored: Stored) {
        let size = stored.list.len();
        let mut inner = self.lock();
        if size > self.budget {
            // Too large to keep: make sure no stale, smaller entry stays behind.
            remove(&mut inner, thread_id, ns, channel);
            return;
        }
        inner.clock += 1;
        let now = inner.clock;
        let slots = inner.threads.entry(thread_id.to_owned()).or_default();
        let old = slots.insert((ns.to_owned(), channel.to_owned()), (stored, now));
        inner.bytes = inner.bytes + size - old.map_or(0, |(s, _)| s.list.len());
        if inner.bytes > self.budget {
            evict(&mut inner, self.budget / 4 * 3);
        }
    }

    /// Drops the entry of a channel (its stored form is unknown).
    pub(crate) fn forget(&self, thread_id: &str, ns: &str, channel: &str) {
        remove(&mut self.lock(), thread_id, ns, channel);
    }

    /// Drops every entry of a thread (deleted or pruned).
    pub(crate) fn forget_thread(&self, thread_id: &str) {
        let mut inner = self.lock();
        if let Some(slots) = inner.threads.remove(thread_id) {
            inner.bytes -= slots.values().map(|(s, _)| s.list.len()).sum::<usize>();
        }
    }

    /// Bytes held, for tests.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

fn remove(inner: &mut Inner, thread_id: &str, ns: &str, channel: &str) {
    let Some(slots) = inner.threads.get_mut(thread_id) else { return };
    if let Some((old, _)) = slots.remove(&(ns.to_owned(), channel.to_owned())) {
        inner.bytes -= old.list.len();
    }
    if slots.is_empty() {
        inner.threads.remove(thread_id);
    }
}

/// Removes least recently used entries until at most `target` bytes remain. Going below the
/// budget, not just to it, makes the sort an occasional cost rather than one per `put`.
fn evict(inner: &mut Inner, target: usize) {
    let mut by_age: Vec<(u64, String, Slot)> = inner
        .threads
        .iter()
        .flat_map(|(thread, slots)| {
            slots.iter().map(|(slot, (_, used))| (*used, thread.clone(), slot.clone()))
        })
        .collect();
    by_age.sort_unstable_by_key(|(used, _, _)| *used);
    for (_, thread, (ns, channel)) in by_age {
        if inner.bytes <= target {
            break;
        }
        remove(inner, &thread, &ns, &channel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(version: &str, size: usize) -> Stored {
        Stored {
            version: version.to_owned(),
            root: version.to_owned(),
            depth: 0,
            count: 0,
            list: vec![0x90; size].into(),
            header_len: 1,
        }
    }

    #[test]
    fn least_recently_used_entries_go_first_and_bytes_add_up() {
        let cache = Cache::new(100);
        for thread in ["t1", "t2", "t3"] {
            cache.put(thread, "", "messages", stored("1", 30));
        }
        assert!(cache.get("t1", "", "messages").is_some(), "t1 is now the most recent");
        // Over budget: the oldest go until three quarters of it are left.
        cache.put("t4", "", "messages", stored("1", 30));
        assert!(cache.get("t2", "", "messages").is_none(), "t2 was the oldest");
        assert!(cache.get("t3", "", "messages").is_none(), "then t3");
        assert!(cache.get("t1", "", "messages").is_some());
        assert_eq!(cache.bytes(), 30 + 30);

        cache.put("t1", "", "messages", stored("2", 10));
        assert_eq!(cache.get("t1", "", "messages").unwrap().version, "2");
        assert_eq!(cache.bytes(), 10 + 30);
        cache.put("t1", "", "messages", stored("3", 101));
        assert!(cache.get("t1", "", "messages").is_none(), "over budget: not kept, old one gone");
        cache.put("t1", "child", "messages", stored("1", 5));
        cache.forget_thread("t1");
        cache.forget("t4", "", "messages");
        assert_eq!(cache.bytes(), 0);
    }
}
