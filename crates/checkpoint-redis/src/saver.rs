//! [`RedisCheckpointer`]: pinning, reads, and the [`Checkpointer`] implementation.

use std::sync::Arc;
use std::time::Duration;

use graph_core::checkpoint::backend::RecentCheckpoints;
use graph_core::checkpoint::{
    ChainLink, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointTuple, Checkpointer, ListOptions,
};
use graph_core::value::ChannelValue;

use crate::cache::Stored;
use crate::conn::Conn;
use crate::encode;
use crate::error::{RedisSaverError, Result};
use crate::keys::{Ns, ThreadKeys};
use crate::read::{self, RawEntry, Select};
use crate::scripts::{PIN_SCRIPT, PUT_CHAIN_SCRIPT, PUT_WRITES_SCRIPT, READ_SCRIPT};

/// A [`Checkpointer`] on plain Redis 6/7 (no modules), single server or cluster.
///
/// See the [crate documentation](crate) for the layout and guarantees. Cloning is cheap and the
/// clones share the connection.
#[derive(Debug, Clone)]
pub struct RedisCheckpointer {
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
    /// The checkpoint stored last per thread and namespace, shared by clones (see
    /// [`RedisCheckpointerBuilder::read_cache`](crate::RedisCheckpointerBuilder::read_cache)).
    recent: Arc<RecentCheckpoints<Stored>>,
}

/// How many checkpoints a filtered `list` reads per round trip before filtering.
const FILTER_PAGE: usize = 64;

impl RedisCheckpointer {
    /// A saver on `conn`; the builder has checked the settings.
    pub(crate) fn new(
        conn: Conn,
        prefix: String,
        ttl_ms: u64,
        refresh_on_read: bool,
        shallow: bool,
        read_cache: usize,
    ) -> Self {
        let recent = Arc::new(RecentCheckpoints::new(read_cache));
        Self { conn, prefix, ttl_ms, refresh_on_read, shallow, recent }
    }

    /// The keys that hold `thread_id`.
    pub fn thread_keys(&self, thread_id: &str) -> ThreadKeys {
        ThreadKeys::new(&self.prefix, thread_id)
    }

    /// Whether this saver keeps only the latest checkpoint per namespace.
    pub fn is_shallow(&self) -> bool {
        self.shallow
    }

    /// The configured expiry; `None` when threads never expire.
    pub fn ttl(&self) -> Option<Duration> {
        (self.ttl_ms > 0).then(|| Duration::from_millis(self.ttl_ms))
    }

    /// Removes the expiry of every key of `thread_id`, for good: later writes keep it unexpiring
    /// until [`unpin`](Self::unpin). Returns `false` (and creates nothing) when the thread does
    /// not exist.
    ///
    /// # Errors
    /// [`RedisSaverError::Redis`] when the server fails.
    pub async fn pin(&self, thread_id: &str) -> Result<bool> {
        self.set_pinned(thread_id, true).await
    }

    /// Undoes [`pin`](Self::pin): the thread expires again after this saver's TTL, counted from
    /// now. Returns `false` when the thread does not exist.
    ///
    /// # Errors
    /// [`RedisSaverError::Redis`] when the server fails.
    pub async fn unpin(&self, thread_id: &str) -> Result<bool> {
        self.set_pinned(thread_id, false).await
    }

    async fn set_pinned(&self, thread_id: &str, pinned: bool) -> Result<bool> {
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

    /// A handle on the shared connection.
    pub(crate) fn conn(&self) -> Conn {
        self.conn.clone()
    }

    /// The remembered checkpoints.
    pub(crate) fn recent(&self) -> &RecentCheckpoints<Stored> {
        &self.recent
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
        read::parse_reply(reply)
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
            return full(self.read(&keys, read::range(&ns, before, options.limit), true).await?);
        };
        // Filtered: read records a page at a time, then values for the matches only, so
        // non-matching checkpoints never ship their (possibly large) values.
        let mut out = Vec::new();
        let mut select = read::range(&ns, before, Some(FILTER_PAGE));
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

    /// `put`, and with `expect_latest` `put_expecting_latest`: a chain of one checkpoint.
    async fn save(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        expect_latest: bool,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let link = ChainLink { writes: None, checkpoint, metadata, new_versions };
        Checkpointer::put_chain(self, config, vec![link], expect_latest).await
    }

    /// Runs a `PUT_CHAIN` invocation: `Ok` when stored, the conflict it reports otherwise.
    async fn invoke_put(
        &self,
        call: &redis::ScriptInvocation<'_>,
        config: &CheckpointConfig,
    ) -> Result<(), CheckpointError> {
        let reply: redis::Value =
            call.invoke_async(&mut self.conn.clone()).await.map_err(RedisSaverError::from)?;
        if let redis::Value::Array(items) = reply {
            // `{0, newest member}`: the parent is no longer the newest; nothing was written.
            let newest = items.into_iter().nth(1).and_then(|m| redis::from_redis_value::<String>(m).ok());
            let found = newest.and_then(|m| read::split_member(&m).map(|(_, id)| id.to_owned()));
            return Err(CheckpointError::conflict(config, found));
        }
        Ok(())
    }
}

impl Checkpointer for RedisCheckpointer {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        if let Some(tuple) = self.cached_tuple(config).await? {
            return Ok(Some(tuple));
        }
        let keys = self.thread_keys(&config.thread_id);
        let ns = Ns::new(&config.checkpoint_ns);
        let select = match &config.checkpoint_id {
            Some(id) => Select::Members(vec![ns.member(id)]),
            None => read::range(&ns, None, Some(1)),
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
        self.save(config, checkpoint, metadata, new_versions, false).await
    }

    /// Atomic: the `PUT_CHAIN` script compares the parent with the namespace's newest checkpoint
    /// before it writes anything.
    async fn put_expecting_latest(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.save(config, checkpoint, metadata, new_versions, true).await
    }

    /// Atomic: one `PUT_CHAIN` script checks the first parent, then stores every link's writes
    /// and checkpoint; on a refused parent nothing of the chain is written.
    async fn put_chain(
        &self,
        config: &CheckpointConfig,
        chain: Vec<ChainLink>,
        expect_latest: bool,
    ) -> Result<CheckpointConfig, CheckpointError> {
        if chain.is_empty() {
            return Err(CheckpointError::empty_chain());
        }
        let keys = self.thread_keys(&config.thread_id);
        let ns = Ns::new(&config.checkpoint_ns);
        let mut call = PUT_CHAIN_SCRIPT.prepare_invoke();
        call.key(&keys.all()[..])
            .arg(self.ttl_ms)
            .arg(if self.shallow { "1" } else { "0" })
            .arg(if expect_latest { "1" } else { "0" })
            .arg(config.checkpoint_id.as_deref().map(|id| ns.member(id)).unwrap_or_default())
            .arg(ns.lex_min())
            .arg(ns.lex_max())
            .arg(chain.len());
        let mut parent = config.clone();
        // What each link stores, for the read cache, with its parent's address.
        let mut stored = Vec::with_capacity(chain.len());
        for link in &chain {
            let writes = match &link.writes {
                Some(batch) => encode::writes(&parent, &batch.writes, &batch.task_id, &batch.task_path)?,
                None => Vec::new(),
            };
            call.arg(writes.len());
            for (field, value, replace) in writes {
                call.arg(field).arg(value).arg(replace);
            }
            let cp = encode::checkpoint(
                &parent,
                &link.checkpoint,
                &link.metadata,
                &link.new_versions,
                self.shallow,
            )?;
            call.arg(&cp.member).arg(&cp.record).arg(&cp.refs).arg(cp.writes_prefix).arg(cp.blobs.len());
            for (field, blob) in cp.blobs {
                call.arg(field).arg(blob);
            }
            let child = parent.clone().with_checkpoint_id(link.checkpoint.id.clone());
            let at = std::mem::replace(&mut parent, child);
            stored.push((at, Stored { member: cp.member, record: cp.record, refs: cp.refs }));
        }
        self.invoke_put(&call, config).await?;
        if self.recent.capacity() > 0 {
            // In order: each link's unchanged channels are known through the one before.
            for (link, (at, stored)) in chain.iter().zip(stored) {
                self.remember(&at, link, stored);
            }
        }
        Ok(parent)
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
        for (field, value, replace) in encoded {
            call.arg(field).arg(value).arg(replace);
        }
        let _: i64 = call.invoke_async(&mut self.conn.clone()).await.map_err(RedisSaverError::from)?;
        Ok(())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.recent.forget_thread(thread_id);
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
}
