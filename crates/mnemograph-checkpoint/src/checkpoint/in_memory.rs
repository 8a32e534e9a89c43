//! [`InMemoryCheckpointer`]: LangGraph's `InMemorySaver`, without serialization.
//!
//! The layout mirrors the Python saver so that behaviour matches call for call: checkpoints are
//! stored *without* their channel values, each value lives in a blob keyed by
//! `(channel, version)` that is written only when the channel is in `new_versions`, and reading a
//! checkpoint reassembles its values from the blobs its `channel_versions` point at. Values are
//! shared [`ChannelValue`]s, so storing one is an `Arc` clone, never a deep copy.

mod compact;
mod namespace;
mod sorted;

use std::collections::HashMap;
use std::fmt;

use parking_lot::RwLock;

use namespace::{Namespace, Saved};
use sorted::Sorted;

use super::{
    ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointTuple, Checkpointer, Commit, ExpectParent, ListOptions, PruneStrategy,
};

/// Thread id → namespace → data.
///
/// Threads are hashed (SipHash: thread ids may come from end users, so the map must resist
/// collision flooding). Everything below a thread is a [`Sorted`] array: those maps are small (a
/// few namespaces and channels) or appended to in key order (ids and versions grow with time),
/// and comparing short strings costs less than hashing them. Namespaces are boxed so that a
/// thread's list of them stays small.
type Threads = HashMap<String, Sorted<String, Box<Namespace>>>;

/// A [`Checkpointer`] that keeps everything in process memory (LangGraph's `InMemorySaver`).
///
/// Meant for tests, demos and short-lived processes: nothing survives a restart, and memory grows
/// with every checkpoint until [`delete_thread`](Checkpointer::delete_thread) or
/// [`prune`](Self::prune) is called.
///
/// # Example
/// ```
/// use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version};
/// use mnemograph_checkpoint::checkpoint::{
///     Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer,
///     InMemoryCheckpointer,
/// };
/// use mnemograph_checkpoint::value::ChannelValue;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let saver = InMemoryCheckpointer::new();
/// let mut cp = Checkpoint { v: 4, id: checkpoint_id(-1), ..Checkpoint::default() };
/// cp.channel_values.insert("count".into(), ChannelValue::new(1_i64));
/// cp.channel_versions.insert("count".into(), next_version(None).into());
/// let new_versions = cp.channel_versions.clone();
/// let config = CheckpointConfig::thread("t1");
/// let meta = CheckpointMetadata::new(CheckpointSource::Input, -1);
///
/// let saved = saver.put(&config, cp, meta, new_versions).await?;
/// let tuple = saver.get_tuple(&config).await?.expect("just saved");
/// assert_eq!(tuple.config, saved);
/// assert_eq!(tuple.checkpoint.channel_values["count"].decode::<i64>()?, 1);
/// # Ok(())
/// # }
/// ```
#[derive(Default)]
pub struct InMemoryCheckpointer {
    /// Every thread's checkpoints, blobs and writes.
    ///
    /// One lock for the whole store, held only for the synchronous map operations of a call and
    /// never across an `.await` (no method awaits anything). An `RwLock` rather than a `Mutex` so
    /// readers (`get_state`, history listings from other tasks) do not queue behind each other;
    /// uncontended, parking_lot's `RwLock` costs one atomic operation like its `Mutex`.
    /// parking_lot rather than std because it does not poison: a test that panics mid-call must
    /// not turn every later call on a shared saver into an error.
    threads: RwLock<Threads>,
}

impl InMemoryCheckpointer {
    /// An empty saver.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps only the `keep_last` newest checkpoints of each namespace of `thread_id`, then drops
    /// every write whose checkpoint is gone and every blob no remaining checkpoint points at.
    /// Returns how many checkpoints were removed; `keep_last == 0` deletes the thread.
    ///
    /// The oldest kept checkpoint keeps its `parent_config`, which then names a checkpoint that no
    /// longer exists. Pending writes of kept checkpoints are untouched, so an interrupted run can
    /// still resume.
    pub fn prune(&self, thread_id: &str, keep_last: usize) -> usize {
        let mut threads = self.threads.write();
        let Some(namespaces) = threads.get_mut(thread_id) else { return 0 };
        let removed = namespaces.values_mut().map(|ns| ns.prune(keep_last)).sum();
        namespaces.retain(|_, ns| !ns.checkpoints.is_empty());
        if namespaces.is_empty() {
            threads.remove(thread_id);
        }
        removed
    }

    /// The number of checkpoints stored, over all threads and namespaces.
    pub fn len_checkpoints(&self) -> usize {
        let threads = self.threads.read();
        let namespaces = threads.values().flat_map(|namespaces| namespaces.iter());
        namespaces.map(|(_, ns)| ns.checkpoints.len()).sum()
    }

    /// `commit` (and `put` as a commit of one) under one write lock: the first link's parent is
    /// checked (when it is expected to be the latest), then every link is stored, each the child
    /// of the one before. Nothing can slip in between the parent check and the inserts, so
    /// two savers of the same thread cannot both pass it, a conflict stores nothing, and no later
    /// link can conflict.
    ///
    /// Synchronous on purpose: the engine calls `commit` once per superstep through
    /// [`DynCheckpointer`](super::DynCheckpointer), which boxes the returned future. The default
    /// awaits `put_writes` and `put` in turn, so its future carries the state of both, a box too
    /// large for the allocator's fast path; `commit` here awaits nothing, and its future holds
    /// little more than the commit it is given.
    fn save_chain(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        let Commit { parent: config, chain, expect } = commit;
        let config = &config;
        let first = chain.first().ok_or_else(CheckpointError::empty_chain)?;
        if first.writes.is_some() && config.checkpoint_id.is_none() {
            let msg = "put_writes needs a config with a checkpoint_id";
            return Err(CheckpointError::Invalid(msg.to_owned()));
        }
        let mut threads = self.threads.write();
        if expect == ExpectParent::Latest {
            let latest = namespace(&threads, config).and_then(Namespace::latest_id);
            if latest.map(|id| &**id) != config.checkpoint_id.as_deref() {
                return Err(CheckpointError::conflict(config, latest.map(|id| id.to_string())));
            }
        }
        let ns = namespace_mut(&mut threads, &config.thread_id, &config.checkpoint_ns);
        // The id of the link stored last: the next link's parent.
        let mut last: Option<String> = None;
        for link in chain {
            let parent = last.as_deref().or(config.checkpoint_id.as_deref());
            if let (Some(batch), Some(parent)) = (link.writes, parent) {
                ns.save_writes(parent, batch.writes, &batch.task_id);
            }
            let id = link.checkpoint.id.clone();
            ns.save(link.checkpoint, link.metadata, &link.new_versions, parent);
            last = Some(id);
        }
        Ok(CheckpointConfig {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            checkpoint_id: last,
        })
    }
}

impl fmt::Debug for InMemoryCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Counts only: the contents can be arbitrarily large.
        let threads = self.threads.read().len();
        f.debug_struct("InMemoryCheckpointer")
            .field("threads", &threads)
            .field("checkpoints", &self.len_checkpoints())
            .finish()
    }
}

/// The namespace at `(thread_id, checkpoint_ns)`, created when missing.
fn namespace_mut<'a>(threads: &'a mut Threads, thread_id: &str, ns: &str) -> &'a mut Namespace {
    // Look up before inserting so the common case (it exists) allocates no key. The obvious
    // `if let Some(..) = get_mut(..) { return .. }` is rejected by today's borrow checker.
    if !threads.contains_key(thread_id) {
        threads.insert(thread_id.to_owned(), Sorted::default());
    }
    let namespaces = threads.get_mut(thread_id).expect("inserted above");
    namespaces.get_or_insert(ns, || ns.to_owned())
}

/// A checkpoint found by `list(None, ..)`: thread, namespace name, namespace, id, checkpoint.
type Candidate<'a> = (&'a str, &'a str, &'a Namespace, &'a str, &'a Saved);

/// The namespace at `config`, if it has ever been written.
fn namespace<'a>(threads: &'a Threads, config: &CheckpointConfig) -> Option<&'a Namespace> {
    threads.get(&config.thread_id)?.get(&config.checkpoint_ns).map(|ns| &**ns)
}

impl Checkpointer for InMemoryCheckpointer {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let threads = self.threads.read();
        let Some(ns) = namespace(&threads, config) else { return Ok(None) };
        let saved = match &config.checkpoint_id {
            Some(id) => ns.checkpoints.get_key_value(id.as_str()),
            None => ns.checkpoints.last(),
        };
        Ok(saved.map(|(id, saved)| ns.tuple(&config.thread_id, &config.checkpoint_ns, id, saved)))
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let limit = options.limit.unwrap_or(usize::MAX);
        let before = options.before.as_deref();
        let filter = options.filter.as_ref();
        let wanted = |saved: &Saved| filter.is_none_or(|f| saved.metadata().matches(f));
        let threads = self.threads.read();

        let Some(config) = config else {
            // Every thread and namespace: gather the candidates and order them by id, as the SQL
            // savers' `ORDER BY checkpoint_id DESC` does. Ties (the same id in two places) are
            // broken by thread and namespace so the order is deterministic.
            let mut all: Vec<Candidate<'_>> = Vec::new();
            for (thread_id, namespaces) in threads.iter() {
                for (ns_name, ns) in namespaces.iter() {
                    for (id, saved) in ns.checkpoints.before(before) {
                        all.push((thread_id, ns_name, ns, id, saved));
                    }
                }
            }
            all.sort_unstable_by(|a, b| (b.3, b.0, b.1).cmp(&(a.3, a.0, a.1)));
            let matching = all.into_iter().filter(|c| wanted(c.4)).take(limit);
            return Ok(matching.map(|(t, n, ns, id, saved)| ns.tuple(t, n, id, saved)).collect());
        };

        let Some(ns) = namespace(&threads, config) else { return Ok(Vec::new()) };
        // A config pinned to one checkpoint lists only that one, as LangGraph's savers do.
        let pinned = |id: &str| config.checkpoint_id.as_deref().is_none_or(|p| p == id);
        let newest_first = ns.checkpoints.before(before).iter().rev();
        let matching = newest_first.filter(|(id, saved)| pinned(id) && wanted(saved)).take(limit);
        let (thread, ns_name) = (&config.thread_id, &config.checkpoint_ns);
        Ok(matching.map(|(id, saved)| ns.tuple(thread, ns_name, id, saved)).collect())
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.save_chain(Commit::put(config, checkpoint, metadata, new_versions))
    }

    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        self.save_chain(commit)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        // Not stored: reads order writes by (task_id, idx), as the MySQL saver does.
        _task_path: &str,
    ) -> Result<(), CheckpointError> {
        let Some(checkpoint_id) = &config.checkpoint_id else {
            let msg = "put_writes needs a config with a checkpoint_id";
            return Err(CheckpointError::Invalid(msg.to_owned()));
        };
        let mut threads = self.threads.write();
        let ns = namespace_mut(&mut threads, &config.thread_id, &config.checkpoint_ns);
        ns.save_writes(checkpoint_id, writes, task_id);
        Ok(())
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        // Checkpoints, blobs and writes all live under the thread's entry, so removing it frees
        // everything (LangGraph's saver leaked blobs here, langgraph#8054). The removed data is
        // dropped after the lock is released.
        let removed = self.threads.write().remove(thread_id);
        drop(removed);
        Ok(())
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        if run_ids.is_empty() {
            return Ok(());
        }
        let mut threads = self.threads.write();
        for namespaces in threads.values_mut() {
            for ns in namespaces.values_mut() {
                ns.delete_runs(run_ids);
            }
            namespaces.retain(|_, ns| !ns.checkpoints.is_empty());
        }
        threads.retain(|_, namespaces| !namespaces.is_empty());
        Ok(())
    }

    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        let mut threads = self.threads.write();
        let target = threads.get(target_thread_id);
        if target.is_some_and(|namespaces| namespaces.iter().any(|(_, ns)| !ns.checkpoints.is_empty())) {
            return Err(CheckpointError::Invalid(format!(
                "cannot copy thread `{source_thread_id}` to `{target_thread_id}`: the target has checkpoints"
            )));
        }
        let Some(source) = threads.get(source_thread_id) else { return Ok(()) };
        // Values, ids and versions are shared `Arc`s: this copies the maps, not the values.
        let copy = source.clone();
        threads.insert(target_thread_id.to_owned(), copy);
        Ok(())
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        let keep_last = match strategy {
            PruneStrategy::KeepLatest => 1,
            PruneStrategy::Delete => 0,
        };
        for thread_id in thread_ids {
            InMemoryCheckpointer::prune(self, thread_id, keep_last);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::checkpoint::backend::checkpoint_id;
    use crate::checkpoint::{next_version, ChainLink, CheckpointSource};

    /// The stored data of `(thread, ns)`.
    fn ns<'a>(threads: &'a Threads, thread: &str, ns: &str) -> &'a Namespace {
        threads[thread].get(ns).expect("namespace stored")
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    /// Saves a checkpoint at `step` whose channels all get a new version; returns its config.
    fn put_step(
        saver: &InMemoryCheckpointer,
        config: &CheckpointConfig,
        step: i64,
        values: &[(&str, i64)],
    ) -> CheckpointConfig {
        let mut cp = Checkpoint { v: 4, id: checkpoint_id(step), ..Checkpoint::default() };
        let mut new_versions = ChannelVersions::new();
        for (channel, value) in values {
            let version = next_version(Some(&format!("{step}")));
            let version: Arc<str> = version.into();
            cp.channel_values.insert((*channel).into(), ChannelValue::new(*value));
            cp.channel_versions.insert((*channel).into(), Arc::clone(&version));
            new_versions.insert((*channel).into(), version);
        }
        let meta = CheckpointMetadata::new(CheckpointSource::Loop, step);
        block_on(saver.put(config, cp, meta, new_versions)).unwrap()
    }

    fn blob_count(saver: &InMemoryCheckpointer) -> usize {
        let threads = saver.threads.read();
        let namespaces = threads.values().flat_map(|namespaces| namespaces.iter());
        namespaces.flat_map(|(_, ns)| ns.blobs.iter()).map(|(_, versions)| versions.len()).sum()
    }

    #[test]
    fn put_shares_values_instead_of_copying() {
        let saver = InMemoryCheckpointer::new();
        let value = ChannelValue::new(vec![1_u8; 64]);
        let ChannelValue::Live(arc) = &value else { unreachable!() };
        let version: Arc<str> = next_version(None).into();
        let cp = Checkpoint {
            id: checkpoint_id(0),
            channel_values: [("a".into(), value.clone())].into(),
            channel_versions: [("a".into(), version.clone())].into(),
            ..Checkpoint::default()
        };
        let config = CheckpointConfig::thread("t");
        block_on(saver.put(
            &config,
            cp,
            CheckpointMetadata::new(CheckpointSource::Loop, 0),
            [("a".into(), version)].into(),
        ))
        .unwrap();
        let tuple = block_on(saver.get_tuple(&config)).unwrap().unwrap();
        let back = &tuple.checkpoint.channel_values["a"];
        let ChannelValue::Live(back) = back else { panic!("not live: {back:?}") };
        assert!(std::sync::Arc::ptr_eq(arc, back));
    }

    #[test]
    fn put_stores_only_new_versions_with_their_own_values() {
        let saver = InMemoryCheckpointer::new();
        let config = CheckpointConfig::thread("t");
        let mut cp = Checkpoint { id: checkpoint_id(0), ..Checkpoint::default() };
        for (channel, value) in [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5)] {
            cp.channel_values.insert(channel.into(), ChannelValue::new(value));
            cp.channel_versions.insert(channel.into(), "1".into());
        }
        // `x` is new but has no value; `a`, `c` and `e` have values but are not new.
        let new_versions = [("b", "1"), ("d", "1"), ("x", "1")].map(|(c, v)| (c.into(), v.into()));
        let meta = CheckpointMetadata::new(CheckpointSource::Loop, 0);
        block_on(saver.put(&config, cp, meta, new_versions.into())).unwrap();
        let threads = saver.threads.read();
        let blobs = &ns(&threads, "t", "").blobs;
        let stored: Vec<(&str, Option<i64>)> = blobs
            .iter()
            .map(|(c, versions)| {
                assert_eq!(versions.len(), 1);
                let value = versions.get("1").expect("version stored").as_ref();
                (&**c, value.map(|v| v.decode::<i64>().unwrap()))
            })
            .collect();
        assert_eq!(stored, [("b", Some(2)), ("d", Some(4)), ("x", None)]);
    }

    #[test]
    fn prune_keeps_the_newest_per_namespace_and_drops_orphans() {
        let saver = InMemoryCheckpointer::new();
        let root = CheckpointConfig::thread("t");
        let child = CheckpointConfig::thread("t").with_ns("child:1");
        let mut last = root.clone();
        for step in 0..5 {
            last = put_step(&saver, &last, step, &[("a", step)]);
            let writes = vec![("a".into(), ChannelValue::new(step))];
            block_on(saver.put_writes(&last, writes, "task", "")).unwrap();
        }
        put_step(&saver, &child, 0, &[("b", 1)]);
        put_step(&saver, &CheckpointConfig::thread("other"), 0, &[("c", 1)]);
        assert_eq!(saver.len_checkpoints(), 7);
        assert_eq!(blob_count(&saver), 7);

        assert_eq!(saver.prune("t", 2), 3);
        assert_eq!(saver.len_checkpoints(), 4);
        // Root keeps 2 blobs (one per kept version of `a`), child 1, other thread 1.
        assert_eq!(blob_count(&saver), 4);
        let listed = block_on(saver.list(Some(&root), ListOptions::new())).unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].config, last);
        assert_eq!(listed[0].pending_writes.len(), 1);
        assert_eq!(listed[1].checkpoint.channel_values["a"].decode::<i64>().unwrap(), 3);
        let writes: usize = ns(&saver.threads.read(), "t", "").writes.len();
        assert_eq!(writes, 2);

        assert_eq!(saver.prune("t", 0), 3);
        assert!(!saver.threads.read().contains_key("t"));
        assert_eq!(saver.len_checkpoints(), 1);
        assert_eq!(saver.prune("missing", 1), 0);
    }

    #[test]
    fn prune_keeps_blobs_still_referenced_by_newer_checkpoints() {
        let saver = InMemoryCheckpointer::new();
        let first = put_step(&saver, &CheckpointConfig::thread("t"), 0, &[("a", 1), ("b", 2)]);
        // The second checkpoint changes only `a`; `b` still points at the first blob.
        let mut cp = block_on(saver.get_tuple(&first)).unwrap().unwrap().checkpoint;
        cp.id = checkpoint_id(1);
        let version: Arc<str> = next_version(Some(&cp.channel_versions["a"])).into();
        cp.channel_versions.insert("a".into(), Arc::clone(&version));
        cp.channel_values.insert("a".into(), ChannelValue::new(10_i64));
        let meta = CheckpointMetadata::new(CheckpointSource::Loop, 1);
        block_on(saver.put(&first, cp, meta, [("a".into(), version)].into())).unwrap();

        assert_eq!(saver.prune("t", 1), 1);
        assert_eq!(blob_count(&saver), 2);
        let latest = block_on(saver.get_tuple(&CheckpointConfig::thread("t"))).unwrap().unwrap();
        assert_eq!(latest.checkpoint.channel_values["a"].decode::<i64>().unwrap(), 10);
        assert_eq!(latest.checkpoint.channel_values["b"].decode::<i64>().unwrap(), 2);
    }

    #[test]
    fn delete_thread_frees_blobs() {
        let saver = InMemoryCheckpointer::new();
        put_step(&saver, &CheckpointConfig::thread("t"), 0, &[("a", 1)]);
        put_step(&saver, &CheckpointConfig::thread("t").with_ns("child:1"), 0, &[("a", 1)]);
        put_step(&saver, &CheckpointConfig::thread("u"), 0, &[("a", 1)]);
        block_on(saver.delete_thread("t")).unwrap();
        assert_eq!(blob_count(&saver), 1);
        assert_eq!(saver.len_checkpoints(), 1);
    }

    #[test]
    fn put_writes_without_checkpoint_id_is_invalid() {
        let saver = InMemoryCheckpointer::new();
        let config = CheckpointConfig::thread("t");
        let err = block_on(saver.put_writes(&config, vec![], "task", "")).unwrap_err();
        assert!(matches!(err, CheckpointError::Invalid(_)), "{err}");
    }

    #[test]
    fn a_chain_whose_first_writes_have_no_checkpoint_stores_nothing() {
        let saver = InMemoryCheckpointer::new();
        let batch = crate::checkpoint::WriteBatch {
            task_id: "task".into(),
            task_path: String::new(),
            writes: vec![("a".into(), ChannelValue::new(1_i64))],
        };
        let link = ChainLink {
            writes: Some(batch),
            checkpoint: Checkpoint { id: checkpoint_id(0), ..Checkpoint::default() },
            metadata: CheckpointMetadata::new(CheckpointSource::Loop, 0),
            new_versions: ChannelVersions::new(),
        };
        let commit = Commit::new(CheckpointConfig::thread("t"), vec![link], ExpectParent::Any);
        let err = block_on(saver.commit(commit)).unwrap_err();
        assert!(matches!(err, CheckpointError::Invalid(_)), "{err}");
        assert_eq!(saver.len_checkpoints(), 0);
    }

    #[test]
    fn debug_shows_counts_only() {
        let saver = InMemoryCheckpointer::new();
        put_step(&saver, &CheckpointConfig::thread("t"), 0, &[("a", 1)]);
        assert_eq!(format!("{saver:?}"), "InMemoryCheckpointer { threads: 1, checkpoints: 1 }");
    }
}
