//! A commit in one `PUT_CHAIN` script: the first parent checked, then every link's writes and
//! checkpoint stored, all or nothing.

use mnemograph_checkpoint::checkpoint::backend::record_io;
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, Commit, ExpectParent};

use crate::encode;
use crate::error::RedisSaverError;
use crate::keys::Ns;
use crate::read_cache::Stored;
use crate::reads;
use crate::scripts::PUT_CHAIN_SCRIPT;
use crate::uncached::Uncached;

impl Uncached {
    /// Stores `commit` atomically: the script compares the parent with the namespace's newest
    /// checkpoint (when the commit expects it to be the latest) before it writes anything.
    /// Returns the last link's address and what each link stored, for the read cache.
    pub(crate) async fn put_chain(
        &self,
        commit: &Commit,
    ) -> Result<(CheckpointConfig, Vec<Stored>), CheckpointError> {
        if commit.chain.is_empty() {
            return Err(CheckpointError::empty_chain());
        }
        let config = &commit.parent;
        let keys = self.thread_keys(&config.thread_id);
        let ns = Ns::new(&config.checkpoint_ns);
        let mut call = PUT_CHAIN_SCRIPT.prepare_invoke();
        call.key(&keys.all()[..])
            .arg(self.ttl_ms())
            .arg(if self.is_shallow() { "1" } else { "0" })
            .arg(if commit.expect == ExpectParent::Latest { "1" } else { "0" })
            .arg(config.checkpoint_id.as_deref().map(|id| ns.member(id)).unwrap_or_default())
            .arg(ns.lex_min())
            .arg(ns.lex_max())
            .arg(commit.chain.len());
        let mut stored = Vec::with_capacity(commit.chain.len());
        let mut bytes = 0;
        for (parent, link) in commit.links() {
            let writes = match &link.writes {
                Some(batch) => encode::writes(&parent, &batch.writes, &batch.task_id, &batch.task_path)?,
                None => Vec::new(),
            };
            call.arg(writes.len());
            for (field, value, replace) in writes {
                bytes += value.len();
                call.arg(field).arg(value).arg(replace);
            }
            let cp = encode::checkpoint(
                &parent,
                &link.checkpoint,
                &link.metadata,
                &link.new_versions,
                self.is_shallow(),
            )?;
            call.arg(&cp.member).arg(&cp.record).arg(&cp.refs).arg(cp.writes_prefix).arg(cp.blobs.len());
            bytes += cp.record.len();
            for (field, blob) in cp.blobs {
                bytes += blob.len();
                call.arg(field).arg(blob);
            }
            stored.push(Stored { member: cp.member, record: cp.record, refs: cp.refs });
        }
        let reply: redis::Value = call.invoke_async(&mut self.conn()).await.map_err(RedisSaverError::from)?;
        // One script: one round trip (the script cache's reload, on a fresh server, aside).
        record_io("redis", bytes, 1);
        if let redis::Value::Array(items) = reply {
            // `{0, newest member}`: the parent is no longer the newest; nothing was written.
            let newest = items.into_iter().nth(1).and_then(|m| redis::from_redis_value::<String>(m).ok());
            let found = newest.and_then(|m| reads::split_member(&m).map(|(_, id)| id.to_owned()));
            return Err(CheckpointError::conflict(config, found));
        }
        self.replicated(&keys).await?;
        Ok((commit.last(), stored))
    }
}
