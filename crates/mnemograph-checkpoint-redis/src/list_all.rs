//! `list(None, ..)`: the checkpoints of every thread, newest first.
//!
//! Plain Redis has no secondary index over threads, and a global one would be a key outside
//! every thread's slot (a second round trip on each write in a cluster, and a list that never
//! expires). So this walks the keyspace with `SCAN` (on every primary of a cluster) for the
//! threads' index keys. It costs time in proportion to the whole keyspace: an operator's call,
//! not one for a request path.

use futures_util::future::try_join_all;
use mnemograph_checkpoint::checkpoint::{CheckpointTuple, ListOptions};

use crate::error::Result;
use crate::keys::ThreadKeys;
use crate::reads::{split_member, Select};
use crate::uncached::Uncached;

/// How many checkpoints are read concurrently while walking the merged list.
const CHUNK: usize = 32;

/// A checkpoint found in some thread's index.
#[derive(Debug)]
struct Candidate {
    /// Its id (the sort key).
    id: String,
    /// Its thread.
    thread_id: String,
    /// Its namespace.
    ns: String,
    /// Its index member.
    member: String,
}

impl Uncached {
    /// Every thread's checkpoints, newest first by id (ties by thread, then namespace).
    pub(crate) async fn list_all(&self, options: ListOptions) -> Result<Vec<CheckpointTuple>> {
        let limit = options.limit.unwrap_or(usize::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let prefix = self.prefix();
        let index_keys = self.conn().scan(&ThreadKeys::index_pattern(prefix), "zset").await?;
        let mut candidates = Vec::new();
        for key in index_keys {
            // Keys under a longer prefix that happens to match the pattern are skipped here.
            let Some(thread_id) = ThreadKeys::thread_of_index(prefix, &key) else { continue };
            let members: Vec<String> =
                redis::cmd("ZRANGE").arg(&key).arg(0).arg(-1).query_async(&mut self.conn()).await?;
            for member in members {
                let Some((ns, id)) = split_member(&member) else { continue };
                if options.before.as_deref().is_some_and(|b| id >= b) {
                    continue;
                }
                let id = id.to_owned();
                candidates.push(Candidate { id, thread_id: thread_id.clone(), ns, member });
            }
        }
        candidates.sort_unstable_by(|a, b| (&b.id, &b.thread_id, &b.ns).cmp(&(&a.id, &a.thread_id, &a.ns)));

        let mut out = Vec::new();
        for chunk in candidates.chunks(CHUNK) {
            let reads = chunk.iter().map(|c| async move {
                let keys = self.thread_keys(&c.thread_id);
                let entries = self.read(&keys, Select::Members(vec![c.member.clone()]), true).await?;
                // The thread may have expired or been deleted since the scan.
                entries.into_iter().next().map(|e| e.into_tuple(&keys, &c.thread_id)).transpose()
            });
            for tuple in try_join_all(reads).await?.into_iter().flatten() {
                if options.filter.as_ref().is_none_or(|f| tuple.metadata.matches(f)) {
                    out.push(tuple);
                    if out.len() == limit {
                        return Ok(out);
                    }
                }
            }
        }
        Ok(out)
    }
}
