//! [`InMemoryCheckpointer`]: LangGraph's `InMemorySaver`, without serialization.
//!
//! The layout mirrors the Python saver so that behaviour matches call for call: checkpoints are
//! stored *without* their channel values, each value lives in a blob keyed by
//! `(channel, version)` that is written only when the channel is in `new_versions`, and reading a
//! checkpoint reassembles its values from the blobs its `channel_versions` point at. Values are
//! shared [`ChannelValue`]s, so storing one is an `Arc` clone, never a deep copy.

mod compact;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::ops::Bound;
use std::sync::Arc;

use parking_lot::RwLock;

use compact::Compact;

use super::{
    write_index, ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, CheckpointTuple, Checkpointer, ListOptions, PendingWrite,
};

/// Thread id → namespace → data.
///
/// Threads are hashed (SipHash: thread ids may come from end users, so the map must resist
/// collision flooding). Everything below a thread is a `BTreeMap`: those maps are small (a few
/// namespaces and channels) or appended to in key order (ids and versions grow with time), and
/// comparing short strings costs less than hashing them. Namespaces are boxed for the same reason
/// as [`Namespace::checkpoints`] entries.
type Threads = HashMap<String, BTreeMap<String, Box<Namespace>>>;

/// A [`Checkpointer`] that keeps everything in process memory (LangGraph's `InMemorySaver`).
///
/// Meant for tests, demos and short-lived processes: nothing survives a restart, and memory grows
/// with every checkpoint until [`delete_thread`](Checkpointer::delete_thread) or
/// [`prune`](Self::prune) is called.
///
/// # Example
/// ```
/// use graph_core::checkpoint::{
///     checkpoint_id, next_version, ChannelValue, Checkpoint, CheckpointConfig,
///     CheckpointMetadata, CheckpointSource, Checkpointer, InMemoryCheckpointer,
/// };
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

/// The data of one namespace of one thread.
#[derive(Default)]
struct Namespace {
    /// Checkpoint id → checkpoint. Ids are uuid6 strings whose order is creation order, so the
    /// newest is the last entry and newest-first is a reverse iteration. Boxed to keep B-tree
    /// nodes small: a `Saved` is ~250 bytes, and allocating ~3 KB leaf nodes was measurable.
    checkpoints: BTreeMap<String, Box<Saved>>,
    /// Channel → its versions' values. `None` is LangGraph's `"empty"` blob: the channel was in
    /// `new_versions` but had no value; reading it yields no value.
    blobs: BTreeMap<Arc<str>, Versions>,
    /// Checkpoint id → its pending writes.
    writes: BTreeMap<String, Writes>,
}

/// The stored values of one channel: `(version, value)` sorted by version.
///
/// A sorted `Vec` rather than a map: a channel of one thread has a few versions, written in
/// increasing order, and a `BTreeMap` spent a whole leaf (~500 bytes) on each channel.
#[derive(Default)]
struct Versions(Vec<(Arc<str>, Option<ChannelValue>)>);

impl Versions {
    /// Stores the value of `version`, replacing a value stored for it before.
    fn insert(&mut self, version: Arc<str>, value: Option<ChannelValue>) {
        // Versions grow with time: the new one almost always goes last.
        match self.0.last() {
            Some((last, _)) if *last >= version => match self.0.binary_search_by(|(v, _)| v.cmp(&version)) {
                Ok(i) => self.0[i].1 = value,
                Err(i) => self.0.insert(i, (version, value)),
            },
            _ => self.0.push((version, value)),
        }
    }

    /// The value stored for `version` (`None` also for the `"empty"` blob).
    fn get(&self, version: &str) -> Option<&ChannelValue> {
        let i = self.0.binary_search_by(|(v, _)| (**v).cmp(version)).ok()?;
        self.0[i].1.as_ref()
    }
}

/// A checkpoint as stored.
struct Saved {
    /// The checkpoint without its values (they live in the blobs).
    checkpoint: Compact,
    /// Its metadata.
    metadata: CheckpointMetadata,
    /// The id of the checkpoint it was derived from.
    parent_id: Option<String>,
}

/// `(task_id, idx)` of a pending write. The task id is shared by all writes of one `put_writes`
/// call, so saving a task's writes allocates it once rather than once per write.
type WriteKey = (Arc<str>, i64);

/// The pending writes of one checkpoint, sorted by `(task_id, idx)` so reads need no sort.
///
/// A sorted `Vec` rather than a `BTreeMap`: a checkpoint gets a handful of writes, and a map's
/// first insert allocates a whole node, which made saving writes twice as slow.
#[derive(Default)]
struct Writes(Vec<(WriteKey, SavedWrite)>);

impl Writes {
    /// Saves `write` under `key`: replacing an existing one when `replace`, otherwise only when
    /// the key is new.
    fn save(&mut self, key: WriteKey, write: SavedWrite, replace: bool) {
        match self.0.binary_search_by(|(k, _)| k.cmp(&key)) {
            Ok(i) if replace => self.0[i].1 = write,
            Ok(_) => {}
            Err(i) => self.0.insert(i, (key, write)),
        }
    }
}

/// A pending write as stored.
struct SavedWrite {
    /// The channel written.
    channel: String,
    /// The value written.
    value: ChannelValue,
    /// The writing task's path.
    #[expect(
        dead_code,
        reason = "kept like LangGraph does, for the newer (task_path, task_id, idx) read order"
    )]
    task_path: Arc<str>,
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
        let namespaces = threads.values().flat_map(BTreeMap::values);
        namespaces.map(|ns| ns.checkpoints.len()).sum()
    }

    /// `put`, and with `expect_latest` `put_expecting_latest`: the parent check and the insert
    /// happen under one write lock, so two savers of the same thread cannot both pass the check.
    fn save(
        &self,
        config: &CheckpointConfig,
        mut checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        expect_latest: bool,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let values = std::mem::take(&mut checkpoint.channel_values);
        let id = checkpoint.id.clone();
        let parent_id = config.checkpoint_id.clone();
        {
            let mut threads = self.threads.write();
            if expect_latest {
                let latest = namespace(&threads, config).and_then(|ns| ns.checkpoints.keys().next_back());
                if latest != config.checkpoint_id.as_ref() {
                    return Err(CheckpointError::conflict(config, latest.cloned()));
                }
            }
            let ns = namespace_mut(&mut threads, &config.thread_id, &config.checkpoint_ns);
            // Both maps are sorted by channel, so one merged pass pairs each new version with
            // its value (moved, not cloned) without a lookup per channel. Values of channels
            // not in `new_versions` are dropped (their blobs were stored by an earlier put);
            // dropping a shared value under the lock is only a reference-count decrement.
            let mut values = values.into_iter().peekable();
            for (channel, version) in new_versions {
                let mut value = None;
                while let Some((next, _)) = values.peek() {
                    match next.cmp(&channel) {
                        Ordering::Less => drop(values.next()),
                        Ordering::Equal => {
                            value = values.next().map(|(_, v)| v);
                            break;
                        }
                        Ordering::Greater => break,
                    }
                }
                ns.store_blob(channel, version, value);
            }
            // The latest checkpoint is almost always the parent, whose unchanged parts the new
            // one shares.
            let previous = ns.checkpoints.values().next_back().map(|s| &s.checkpoint);
            let checkpoint = Compact::new(checkpoint, previous);
            ns.checkpoints.insert(id.clone(), Box::new(Saved { checkpoint, metadata, parent_id }));
        }
        Ok(CheckpointConfig {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            checkpoint_id: Some(id),
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

impl Namespace {
    /// Stores the value of `channel` at `version`.
    fn store_blob(&mut self, channel: Arc<str>, version: Arc<str>, value: Option<ChannelValue>) {
        match self.blobs.get_mut(&channel) {
            Some(versions) => versions.insert(version, value),
            None => {
                self.blobs.insert(channel, Versions(vec![(version, value)]));
            }
        }
    }

    /// The values of a checkpoint, from the blobs of each channel's version.
    fn load_values(&self, versions: &ChannelVersions) -> BTreeMap<Arc<str>, ChannelValue> {
        let stored = |(channel, version): (&Arc<str>, &Arc<str>)| {
            let value = self.blobs.get(channel)?.get(version)?;
            // `Arc` clones of the shared name and value.
            Some((Arc::clone(channel), value.clone()))
        };
        versions.iter().filter_map(stored).collect()
    }

    /// The pending writes saved against `checkpoint_id`, in `(task_id, idx)` order.
    fn pending_writes(&self, checkpoint_id: &str) -> Vec<PendingWrite> {
        let Some(Writes(writes)) = self.writes.get(checkpoint_id) else { return Vec::new() };
        let pending = |((task_id, _), w): &(WriteKey, SavedWrite)| PendingWrite {
            task_id: task_id.to_string(),
            channel: w.channel.clone(),
            value: w.value.clone(),
        };
        writes.iter().map(pending).collect()
    }

    /// The full tuple of one stored checkpoint.
    fn tuple(&self, thread_id: &str, checkpoint_ns: &str, saved: &Saved) -> CheckpointTuple {
        let address = |id: &String| CheckpointConfig {
            thread_id: thread_id.to_owned(),
            checkpoint_ns: checkpoint_ns.to_owned(),
            checkpoint_id: Some(id.clone()),
        };
        let mut checkpoint = saved.checkpoint.to_checkpoint();
        checkpoint.channel_values = self.load_values(&checkpoint.channel_versions);
        CheckpointTuple {
            config: address(&checkpoint.id),
            parent_config: saved.parent_id.as_ref().map(address),
            metadata: saved.metadata.clone(),
            pending_writes: self.pending_writes(&checkpoint.id),
            checkpoint,
        }
    }

    /// Removes all but the `keep_last` newest checkpoints and whatever only they referenced.
    fn prune(&mut self, keep_last: usize) -> usize {
        let removed = self.checkpoints.len().saturating_sub(keep_last);
        if removed > 0 {
            // Ids sort by creation time: the first `removed` keys are the oldest.
            let kept = match self.checkpoints.keys().nth(removed).cloned() {
                Some(first_kept) => self.checkpoints.split_off(&first_kept),
                None => BTreeMap::new(),
            };
            self.checkpoints = kept;
        }
        let checkpoints = &self.checkpoints;
        self.writes.retain(|id, _| checkpoints.contains_key(id));
        let versions = checkpoints.values().flat_map(|s| s.checkpoint.channel_versions());
        let referenced: HashSet<(&str, &str)> =
            versions.map(|(channel, version)| (&**channel, &**version)).collect();
        self.blobs.retain(|channel, Versions(versions)| {
            versions.retain(|(v, _)| referenced.contains(&(&**channel, &**v)));
            !versions.is_empty()
        });
        removed
    }
}

/// The namespace at `(thread_id, checkpoint_ns)`, created when missing.
fn namespace_mut<'a>(threads: &'a mut Threads, thread_id: &str, ns: &str) -> &'a mut Namespace {
    // Look up before inserting so the common case (it exists) allocates no key. The obvious
    // `if let Some(..) = get_mut(..) { return .. }` is rejected by today's borrow checker.
    if !threads.contains_key(thread_id) {
        threads.insert(thread_id.to_owned(), BTreeMap::new());
    }
    let namespaces = threads.get_mut(thread_id).expect("inserted above");
    if !namespaces.contains_key(ns) {
        namespaces.insert(ns.to_owned(), Box::default());
    }
    namespaces.get_mut(ns).expect("inserted above")
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
            Some(id) => ns.checkpoints.get(id),
            None => ns.checkpoints.values().next_back(),
        };
        Ok(saved.map(|saved| ns.tuple(&config.thread_id, &config.checkpoint_ns, saved)))
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let limit = options.limit.unwrap_or(usize::MAX);
        let before = options.before.as_deref();
        let range = (Bound::Unbounded, before.map_or(Bound::Unbounded, Bound::Excluded));
        let filter = options.filter.as_ref();
        let wanted = |saved: &Saved| filter.is_none_or(|f| saved.metadata.matches(f));
        let threads = self.threads.read();

        let Some(config) = config else {
            // Every thread and namespace: gather the candidates and order them by id, as the SQL
            // savers' `ORDER BY checkpoint_id DESC` does. Ties (the same id in two places) are
            // broken by thread and namespace so the order is deterministic.
            let mut all: Vec<Candidate<'_>> = Vec::new();
            for (thread_id, namespaces) in threads.iter() {
                for (ns_name, ns) in namespaces {
                    for (id, saved) in ns.checkpoints.range::<str, _>(range) {
                        all.push((thread_id, ns_name, ns, id, saved));
                    }
                }
            }
            all.sort_unstable_by(|a, b| (b.3, b.0, b.1).cmp(&(a.3, a.0, a.1)));
            let matching = all.into_iter().filter(|c| wanted(c.4)).take(limit);
            return Ok(matching.map(|(t, n, ns, _, saved)| ns.tuple(t, n, saved)).collect());
        };

        let Some(ns) = namespace(&threads, config) else { return Ok(Vec::new()) };
        // A config pinned to one checkpoint lists only that one, as LangGraph's savers do.
        let pinned = |id: &String| config.checkpoint_id.as_ref().is_none_or(|p| p == id);
        let newest_first = ns.checkpoints.range::<str, _>(range).rev();
        let matching = newest_first.filter(|(id, saved)| pinned(id) && wanted(saved)).take(limit);
        let (thread, ns_name) = (&config.thread_id, &config.checkpoint_ns);
        Ok(matching.map(|(_, saved)| ns.tuple(thread, ns_name, saved)).collect())
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.save(config, checkpoint, metadata, new_versions, false)
    }

    async fn put_expecting_latest(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.save(config, checkpoint, metadata, new_versions, true)
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let Some(checkpoint_id) = &config.checkpoint_id else {
            let msg = "put_writes needs a config with a checkpoint_id";
            return Err(CheckpointError::Invalid(msg.to_owned()));
        };
        let (task_id, task_path): (Arc<str>, Arc<str>) = (task_id.into(), task_path.into());
        let mut threads = self.threads.write();
        let ns = namespace_mut(&mut threads, &config.thread_id, &config.checkpoint_ns);
        if !ns.writes.contains_key(checkpoint_id) {
            ns.writes.insert(checkpoint_id.clone(), Writes::default());
        }
        let stored = ns.writes.get_mut(checkpoint_id).expect("inserted above");
        // Exactly: a checkpoint usually gets one batch, and the amortized growth of `reserve`
        // left room for four writes in each checkpoint's list.
        stored.0.reserve_exact(writes.len());
        for (position, (channel, value)) in writes.into_iter().enumerate() {
            let idx = write_index(&channel, position);
            let key = (Arc::clone(&task_id), idx);
            let write = SavedWrite { channel, value, task_path: Arc::clone(&task_path) };
            // Special channels (`__error__`, `__interrupt__`, ...) have negative indexes and the
            // latest write wins; regular writes are idempotent, so a retried task cannot change
            // what was saved.
            stored.save(key, write, idx < 0);
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::{checkpoint_id, next_version, CheckpointSource};

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
        let namespaces = threads.values().flat_map(BTreeMap::values);
        namespaces.flat_map(|ns| ns.blobs.values()).map(|v| v.0.len()).sum()
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
        let blobs = &threads["t"][""].blobs;
        let stored: Vec<(&str, Option<i64>)> = blobs
            .iter()
            .map(|(c, versions)| {
                assert_eq!(versions.0.len(), 1);
                (&**c, versions.get("1").map(|v| v.decode::<i64>().unwrap()))
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
        let writes: usize = saver.threads.read()["t"][""].writes.len();
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
    fn debug_shows_counts_only() {
        let saver = InMemoryCheckpointer::new();
        put_step(&saver, &CheckpointConfig::thread("t"), 0, &[("a", 1)]);
        assert_eq!(format!("{saver:?}"), "InMemoryCheckpointer { threads: 1, checkpoints: 1 }");
    }
}
