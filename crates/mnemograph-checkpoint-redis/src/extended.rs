//! LangGraph's extended capabilities on Redis: `delete_for_runs`, `copy_thread` and `prune`.
//!
//! Each thread's part is one Lua script over its keys (one cluster slot), so it is atomic per
//! thread. A call naming several threads is not atomic across them: their keys live in different
//! slots, where no script or transaction can reach them together.

use mnemograph_checkpoint::checkpoint::{CheckpointError, PruneStrategy};

use crate::error::{RedisSaverError, Result};
use crate::keys::ThreadKeys;
use crate::scripts::{COPY_READ_SCRIPT, COPY_WRITE_SCRIPT, DELETE_RUNS_SCRIPT};
use crate::uncached::Uncached;

impl Uncached {
    /// Deletes the checkpoints of `run_ids` in every thread under the prefix. Finding the threads
    /// walks the keyspace with `SCAN`, as `list(None, ..)` does: an operator's call.
    pub(crate) async fn delete_runs(&self, run_ids: &[String]) -> Result<()> {
        if run_ids.is_empty() {
            return Ok(());
        }
        let prefix = self.prefix();
        for key in self.conn().scan(&ThreadKeys::index_pattern(prefix), "zset").await? {
            // Keys under a longer prefix that happens to match the pattern are skipped here.
            let Some(thread_id) = ThreadKeys::thread_of_index(prefix, &key) else { continue };
            let keys = self.thread_keys(&thread_id);
            let mut call = DELETE_RUNS_SCRIPT.prepare_invoke();
            call.key(&keys.all()[..]);
            for run in run_ids {
                call.arg(run);
            }
            let (done, detail): (i64, redis::Value) = call.invoke_async(&mut self.conn()).await?;
            if done == 0 {
                let member: String = redis::from_redis_value(detail).unwrap_or_default();
                return Err(RedisSaverError::corrupt(&keys.checkpoints, &member, "the record is not JSON"));
            }
        }
        Ok(())
    }

    /// Copies every key of `source` to `target` (see
    /// [`Checkpointer::copy_thread`](mnemograph_checkpoint::checkpoint::Checkpointer::copy_thread)):
    /// the source's hashes read by one script, written under the target's keys by another that
    /// first checks the target has no checkpoint.
    pub(crate) async fn copy_thread_to(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        let from = self.thread_keys(source);
        let mut read = COPY_READ_SCRIPT.prepare_invoke();
        read.key(&from.all()[..]);
        let hashes: Vec<Vec<Vec<u8>>> =
            read.invoke_async(&mut self.conn()).await.map_err(RedisSaverError::from)?;
        let to = self.thread_keys(target);
        let mut write = COPY_WRITE_SCRIPT.prepare_invoke();
        write.key(&to.all()[..]).arg(self.ttl_ms());
        for hash in &hashes {
            write.arg(hash.len() / 2);
        }
        for item in hashes.iter().flatten() {
            write.arg(item.as_slice());
        }
        let copied: i64 = write.invoke_async(&mut self.conn()).await.map_err(RedisSaverError::from)?;
        if copied == 0 {
            return Err(CheckpointError::Invalid(format!(
                "cannot copy thread `{source}` to `{target}`: the target has checkpoints"
            )));
        }
        Ok(())
    }

    /// LangGraph's `prune`: the saver's own prune of each thread, keeping one checkpoint per
    /// namespace or none.
    pub(crate) async fn prune_threads(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<()> {
        let keep_last = match strategy {
            PruneStrategy::KeepLatest => 1,
            PruneStrategy::Delete => 0,
        };
        for thread_id in thread_ids {
            self.prune(thread_id, keep_last).await?;
        }
        Ok(())
    }
}
