//! Retention: the script behind [`RedisCheckpointer::prune`](crate::RedisCheckpointer::prune).

use crate::error::Result;
use crate::scripts::PRUNE_SCRIPT;
use crate::uncached::Uncached;

impl Uncached {
    /// Keeps the `keep_last` newest checkpoints of each namespace of `thread_id` (see
    /// [`RedisCheckpointer::prune`](crate::RedisCheckpointer::prune)).
    pub(crate) async fn prune(&self, thread_id: &str, keep_last: usize) -> Result<u64> {
        let keys = self.thread_keys(thread_id);
        let mut call = PRUNE_SCRIPT.prepare_invoke();
        call.key(&keys.all()[..]).arg(u64::try_from(keep_last).unwrap_or(u64::MAX));
        let removed: u64 = call.invoke_async(&mut self.conn()).await?;
        Ok(removed)
    }
}
