//! [`Uncached`]: the saver under [`RedisCheckpointer`](crate::RedisCheckpointer)'s read cache:
//! pinning, reads, and the [`Checkpointer`] implementation.

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::backend::{record_io, Fingerprinted};
use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, ListOptions, PruneStrategy,
};
use mnemograph_checkpoint::value::ChannelValue;

use crate::conn::Conn;
use crate::encode;
use crate::error::{RedisSaverError, Result};
use crate::keys::{Ns, ThreadKeys};
use crate::reads::{self, RawEntry, Select};
use crate::replicas::ReplicaWait;
use crate::scripts::{PIN_SCRIPT, PUT_WRITES_SCRIPT, READ_SCRIPT};

/// The [`Checkpointer`] on plain Redis 6/7 (no modules), single server or cluster, without the
/// read cache. Cloning is cheap and the clones share the connection.
#[derive(Debug, Clone)]
pub(crate) struct Uncached {
    /// The connection (multiplexed; cloned per call).
    conn: Conn,
    /// Prepended to every key.
    prefix: String,
    /// Expiry in milliseconds; 0 for none.
    ttl_ms: u64,
    /// Whether reads refresh the expiry.
    refresh_on_read: bool,
    /// Whether only the latest checkpoint per namespace is kept.
    shallow: bool,
    /// The replicas each write waits for, if any.
    replicas: Option<ReplicaWait>,
}

/// How many checkpoints a filtered `list` reads per round trip before filtering.
const FILTER_PAGE: usize = 64;

impl Uncached {
    /// A saver on `conn`; the builder has checked the settings.
    pub(crate) fn new(
        conn: Conn,
        prefix: String,
        ttl_ms: u64,
        refresh_on_read: bool,
        shallow: bool,
        replicas: Option<ReplicaWait>,
    ) -> Self {
        Self { conn, prefix, ttl_ms, refresh_on_read, shallow, replicas }
    }

    /// Waits for the configured replicas after a write to the keys of `keys`.
    pub(crate) async fn replicated(&self, keys: &ThreadKeys) -> Result<(), RedisSaverError> {
        match &self.replicas {
            Some(wait) => wait.after_write(&self.conn, keys.all()[0]).await,
            None => Ok(()),
        }
    }

    /// The keys that hold `thread_id`.
    pub(crate) fn thread_keys(&self, thread_id: &str) -> ThreadKeys {
        ThreadKeys::new(&self.prefix, thread_id)
    }

    /// Whether this saver keeps only the latest checkpoint per namespace.
    pub(crate) fn is_shallow(&self) -> bool {
        self.shallow
    }

    /// The configured expiry; `None` when threads never expire.
    pub(crate) fn ttl(&self) -> Option<Duration> {
        (self.ttl_ms > 0).then(|| Duration::from_millis(self.ttl_ms))
    }

    /// Sets or removes the expiry of every key of `thread_id` (see
    /// [`RedisCheckpointer::pin`](crate::RedisCheckpointer::pin)).
    pub(crate) async fn set_pinned(&self, thread_id: &str, pinned: bool) -> Result<bool> {
        let keys = self.thread_keys(thread_id);
        let mut call = PIN_SCRIPT.prepare_invoke();
        call.key(&keys.all()[..]).arg(if pinned { "1" } else { "0" }).arg(self.ttl_ms);
        let existed: i64 = call.invoke_async(&mut self.conn.clone()).await?;
        Ok(existed == 1)
    }

    /// The key prefix.
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The expiry in milliseconds; 0 for none.
    pub(crate) fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// A handle on the shared connection.
    pub(crate) fn conn(&self) -> Conn {
        self.conn.clone()
    }

    /// The expiry a read pushes back, in milliseconds; 0 when reads leave it alone.
    pub(crate) fn refresh_ttl_ms(&self) -> u64 {
        if self.refresh_on_read {
            self.ttl_ms
        } else {
            0
        }
    }

    /// Runs the `READ` script on one namespace of one thread.
    pub(crate) async fn read(
        &self,
        keys: &ThreadKeys,
        select: Select,
        with_values: bool,
    ) -> Result<Vec<RawEntry>> {
        let mut call = READ_SCRIPT.prepare_invoke();
        call.key(&keys.all()[..]).arg(self.refresh_ttl_ms()).arg(if with_values { "1" } else { "0" });
        match select {
            Select::Range { max, min, count } => call.arg("range").arg(max).arg(min).arg(count),
            Select::Members(members) => call.arg("members").arg(members),
        };
        let reply: redis::Value = call.invoke_async(&mut self.conn.clone()).await?;
        let entries = reads::parse_reply(reply)?;
        record_io("redis", entries.iter().map(RawEntry::bytes).sum(), 1);
        Ok(entries)
    }

    /// `list` on one thread and namespace.
    async fn list_thread(
        &self,
        config: &CheckpointConfig,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>> {
        let limit = options.limit.unwrap_or(usize::MAX);
        if limit == 0 {
            return Ok(Vec::new());
        }
        let keys = self.thread_keys(&config.thread_id);
        let ns = Ns::new(&config.checkpoint_ns);
        let before = options.before.as_deref();
        let wanted = |t: &CheckpointTuple| options.filter.as_ref().is_none_or(|f| t.metadata.matches(f));
        let full = |entries: Vec<RawEntry>| -> Result<Vec<CheckpointTuple>> {
            let tuples = entries.into_iter().map(|e| e.into_tuple(&keys, &config.thread_id));
            tuples.filter(|t| t.as_ref().map_or(true, wanted)).take(limit).collect()
        };
        if let Some(pinned) = &config.checkpoint_id {
            // A pinned config lists only that checkpoint, as LangGraph's savers do.
            if before.is_some_and(|b| pinned.as_str() >= b) {
                return Ok(Vec::new());
            }
            return full(self.read(&keys, Select::Members(vec![ns.member(pinned)]), true).await?);
        }
        let Some(filter) = &options.filter else {
            return full(self.read(&keys, reads::range(&ns, before, options.limit), true).await?);
        };
        // Filtered: read records a page at a time, then values for the matches only, so
        // non-matching checkpoints never ship their (possibly large) values.
        let mut out = Vec::new();
        let mut select = reads::range(&ns, before, Some(FILTER_PAGE));
        loop {
            let page = self.read(&keys, select, false).await?;
            let mut matches = Vec::new();
            for entry in &page {
                if entry.record(&keys, &config.thread_id)?.metadata.matches(filter) {
                    matches.push(entry.member.clone());
                    if out.len() + matches.len() == limit {
                        break;
                    }
                }
            }
            if !matches.is_empty() {
                out.extend(full(self.read(&keys, Select::Members(matches), true).await?)?);
            }
            match page.last() {
                Some(last) if page.len() == FILTER_PAGE && out.len() < limit => {
                    select = Select::Range {
                        max: format!("({}", last.member),
                        min: ns.lex_min(),
                        count: FILTER_PAGE as i64,
                    };
                }
                _ => return Ok(out),
            }
        }
    }
}

impl Checkpointer for Uncached {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let keys = self.thread_keys(&config.thread_id);
        let ns = Ns::new(&config.checkpoint_ns);
        let select = match &config.checkpoint_id {
            Some(id) => Select::Members(vec![ns.member(id)]),
            None => reads::range(&ns, None, Some(1)),
        };
        let entries = self.read(&keys, select, true).await?;
        let tuple = entries.into_iter().next().map(|e| e.into_tuple(&keys, &config.thread_id)).transpose()?;
        Ok(tuple)
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        Ok(match config {
            Some(config) => self.list_thread(config, options).await?,
            None => self.list_all(options).await?,
        })
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.commit(Commit::put(config, checkpoint, metadata, new_versions)).await
    }

    /// Atomic: one `PUT_CHAIN` script checks the first parent, then stores every link's writes
    /// and checkpoint; on a refused parent nothing of the chain is written.
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        Ok(self.commit_fingerprinted(&commit, None).await?.0)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let encoded = encode::writes(config, &writes, task_id, task_path)?;
        if encoded.is_empty() {
            return Ok(());
        }
        let keys = self.thread_keys(&config.thread_id);
        let mut call = PUT_WRITES_SCRIPT.prepare_invoke();
        call.key(&keys.all()[..]).arg(self.ttl_ms);
        let mut bytes = 0;
        for (field, value, replace) in encoded {
            bytes += value.len();
            call.arg(field).arg(value).arg(replace);
        }
        let _: i64 = call.invoke_async(&mut self.conn.clone()).await.map_err(RedisSaverError::from)?;
        record_io("redis", bytes, 1);
        self.replicated(&keys).await?;
        Ok(())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        let keys = self.thread_keys(thread_id);
        // One command over keys of one slot: atomic, and UNLINK frees large hashes off the
        // server's main thread.
        let _: i64 = redis::cmd("UNLINK")
            .arg(&keys.all()[..])
            .query_async(&mut self.conn.clone())
            .await
            .map_err(RedisSaverError::from)?;
        Ok(())
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        Ok(self.delete_runs(run_ids).await?)
    }

    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        self.copy_thread_to(source_thread_id, target_thread_id).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        Ok(self.prune_threads(thread_ids, strategy).await?)
    }
}
