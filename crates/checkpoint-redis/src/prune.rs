//! Retention: [`RedisCheckpointer::prune`] keeps the newest checkpoints of a thread and frees
//! what only the older ones used.

use crate::error::Result;
use crate::saver::RedisCheckpointer;
use crate::scripts::PRUNE_SCRIPT;

impl RedisCheckpointer {
    /// Keeps the `keep_last` newest checkpoints of each namespace of `thread_id` and removes the
    /// older ones, every pending write whose checkpoint is gone, and every channel value no
    /// remaining checkpoint reads. Returns how many checkpoints were removed (0 for a thread
    /// that does not exist); `keep_last == 0` deletes the thread, as
    /// [`delete_thread`](graph_core::checkpoint::Checkpointer::delete_thread) does.
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
            self.recent().forget_thread(thread_id);
        }
        let keys = self.thread_keys(thread_id);
        let mut call = PRUNE_SCRIPT.prepare_invoke();
        call.key(&keys.all()[..]).arg(u64::try_from(keep_last).unwrap_or(u64::MAX));
        let removed: u64 = call.invoke_async(&mut self.conn()).await?;
        Ok(removed)
    }
}
