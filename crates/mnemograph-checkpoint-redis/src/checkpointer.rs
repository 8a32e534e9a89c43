//! [`RedisCheckpointer`]: the Redis saver with its read cache, and what it offers beside the
//! [`Checkpointer`] calls (pinning, retention, its keys).
//!
//! [`Checkpointer`]: mnemograph_checkpoint::checkpoint::Checkpointer

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::backend::{Delegate, ReadCache};
use mnemograph_checkpoint::checkpoint::DynCheckpointer;

use crate::error::Result;
use crate::keys::ThreadKeys;
use crate::uncached::Uncached;

/// A [`Checkpointer`] on plain Redis 6/7 (no modules), single server or cluster.
///
/// See the [crate documentation](crate) for the layout and guarantees. Cloning is cheap and the
/// clones share the connection and the read cache.
///
/// [`Checkpointer`]: mnemograph_checkpoint::checkpoint::Checkpointer
#[derive(Debug, Clone)]
pub struct RedisCheckpointer {
    /// The saver behind the cache of the checkpoints it stored last (see
    /// [`RedisCheckpointerBuilder::read_cache`](crate::RedisCheckpointerBuilder::read_cache)).
    layer: ReadCache<Uncached>,
}

impl RedisCheckpointer {
    /// `uncached` behind a read cache of `read_cache` (thread, namespace) pairs.
    pub(crate) fn new(uncached: Uncached, read_cache: usize) -> Self {
        Self { layer: ReadCache::with_capacity(uncached, read_cache) }
    }

    /// The saver under the cache.
    pub(crate) fn uncached(&self) -> &Uncached {
        self.layer.saver()
    }

    /// The keys that hold `thread_id`.
    pub fn thread_keys(&self, thread_id: &str) -> ThreadKeys {
        self.uncached().thread_keys(thread_id)
    }

    /// Whether this saver keeps only the latest checkpoint per namespace.
    pub fn is_shallow(&self) -> bool {
        self.uncached().is_shallow()
    }

    /// The configured expiry; `None` when threads never expire.
    pub fn ttl(&self) -> Option<Duration> {
        self.uncached().ttl()
    }

    /// Removes the expiry of every key of `thread_id`, for good: later writes keep it unexpiring
    /// until [`unpin`](Self::unpin). Returns `false` (and creates nothing) when the thread does
    /// not exist.
    ///
    /// # Errors
    /// [`RedisSaverError::Redis`](crate::RedisSaverError::Redis) when the server fails.
    pub async fn pin(&self, thread_id: &str) -> Result<bool> {
        self.uncached().set_pinned(thread_id, true).await
    }

    /// Undoes [`pin`](Self::pin): the thread expires again after this saver's TTL, counted from
    /// now. Returns `false` when the thread does not exist.
    ///
    /// # Errors
    /// [`RedisSaverError::Redis`](crate::RedisSaverError::Redis) when the server fails.
    pub async fn unpin(&self, thread_id: &str) -> Result<bool> {
        self.uncached().set_pinned(thread_id, false).await
    }

    /// Keeps the `keep_last` newest checkpoints of each namespace of `thread_id` and removes the
    /// older ones, every pending write whose checkpoint is gone, and every channel value no
    /// remaining checkpoint reads. Returns how many checkpoints were removed (0 for a thread
    /// that does not exist); `keep_last == 0` deletes the thread, as
    /// [`delete_thread`](mnemograph_checkpoint::checkpoint::Checkpointer::delete_thread) does.
    ///
    /// One Lua script over the thread's keys (one cluster slot), so it is atomic: a concurrent
    /// `put` lands entirely before or after it. It reads every key of the thread, so its cost
    /// grows with the thread's size, not with the number of checkpoints removed.
    ///
    /// Pending writes of kept checkpoints stay, so an interrupted run can still resume. The
    /// oldest kept checkpoint keeps its `parent_config`, which then names a checkpoint that no
    /// longer exists. Expiry is untouched: the keys keep their deadline, a pinned thread stays
    /// pinned. In [shallow](crate::RedisCheckpointerBuilder::shallow) mode each namespace holds
    /// one checkpoint already, so any `keep_last > 0` removes none.
    ///
    /// # Errors
    /// [`RedisSaverError::Redis`](crate::RedisSaverError::Redis) when the server fails.
    pub async fn prune(&self, thread_id: &str, keep_last: usize) -> Result<u64> {
        if keep_last == 0 {
            self.layer.forget_thread(thread_id);
        }
        self.uncached().prune(thread_id, keep_last).await
    }
}

/// A saver through its read cache: every `Checkpointer` call goes to the layer.
impl Delegate for RedisCheckpointer {
    fn saver(&self) -> &dyn DynCheckpointer {
        &self.layer
    }
}
