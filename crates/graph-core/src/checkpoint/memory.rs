//! [`InMemoryCheckpointer`]: LangGraph's `InMemorySaver`, without serialization.
//!
//! The layout mirrors the Python saver so that behaviour matches call for call: checkpoints are
//! stored *without* their channel values, each value lives in a blob keyed by
//! `(channel, version)` that is written only when the channel is in `new_versions`, and reading a
//! checkpoint reassembles its values from the blobs its `channel_versions` point at. Values are
//! shared [`ChannelValue`]s, so storing one is an `Arc` clone, never a deep copy.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::ops::Bound;

use parking_lot::RwLock;

use super::{
    write_index, ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, CheckpointTuple, Checkpointer, ListOptions, PendingWrite,
};

/// Thread id → namespace → data.
type Threads = HashMap<String, HashMap<String, Namespace>>;

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
/// cp.channel_versions.insert("count".into(), next_version(None));
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
    /// newest is the last entry and newest-first is a reverse iteration.
    checkpoints: BTreeMap<String, Saved>,
    /// Channel → version → value. `None` is LangGraph's `"empty"` blob: the channel was in
    /// `new_versions` but had no value; reading it yields no value.
    blobs: HashMap<String, HashMap<String, Option<ChannelValue>>>,
    /// Checkpoint id → `(task_id, idx)` → write. A `BTreeMap` so reads come out in
    /// `(task_id, idx)` order without sorting.
    writes: HashMap<String, BTreeMap<(String, i64), SavedWrite>>,
}

/// A checkpoint as stored.
struct Saved {
    /// The checkpoint with an empty `channel_values` (values live in the blobs).
    checkpoint: Checkpoint,
    /// Its metadata.
    metadata: CheckpointMetadata,
    /// The id of the checkpoint it was derived from.
    parent_id: Option<String>,
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
    task_path: String,
}

impl InMemoryCheckpointer {
    /// An empty saver.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps only the `keep_last` newest checkpoints of each namespace of `thread_id`, then drops
    /// the writes of removed checkpoints and every blob no remaining checkpoint points at.
    /// Returns how many checkpoints were removed.
    ///
    /// The oldest kept checkpoint keeps its `parent_config`, which then names a checkpoint that no
    /// longer exists. Pending writes of kept checkpoints are untouched, so an interrupted run can
    /// still resume.
    pub fn prune(&self, thread_id: &str, keep_last: usize) -> usize {
        let mut threads = self.threads.write();
        let Some(namespaces) = threads.get_mut(thread_id) else {
            return 0;
        };
        let mut removed = 0;
        for ns in namespaces.values_mut() {
            removed += ns.prune(keep_last);
        }
        namespaces.retain(|_, ns| !ns.checkpoints.is_empty());
        if namespaces.is_empty() {
            threads.remove(thread_id);
        }
        removed
    }

    /// The number of checkpoints stored, over all threads and namespaces.
    pub fn len_checkpoints(&self) -> usize {
        self.threads.read().values().flat_map(HashMap::values).map(|ns| ns.checkpoints.len()).sum()
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
    /// The values of a checkpoint, from the blobs of each channel's version.
    fn load_values(&self, versions: &ChannelVersions) -> BTreeMap<String, ChannelValue> {
        versions
            .iter()
            .filter_map(|(channel, version)| {
                let value = self.blobs.get(channel)?.get(version)?.as_ref()?;
                // An `Arc` clone of the shared value.
                Some((channel.clone(), value.clone()))
            })
            .collect()
    }

    /// The full tuple of one stored checkpoint.
    fn tuple(&self, thread_id: &str, checkpoint_ns: &str, saved: &Saved) -> CheckpointTuple {
        let address = |id: &String| CheckpointConfig {
            thread_id: thread_id.to_owned(),
            checkpoint_ns: checkpoint_ns.to_owned(),
            checkpoint_id: Some(id.clone()),
        };
        let mut checkpoint = saved.checkpoint.clone();
        checkpoint.channel_values = self.load_values(&checkpoint.channel_versions);
        let pending_writes = self.writes.get(&checkpoint.id).map_or_else(Vec::new, |writes| {
            writes
                .iter()
                .map(|((task_id, _), w)| PendingWrite {
                    task_id: task_id.clone(),
                    channel: w.channel.clone(),
                    value: w.value.clone(),
                })
                .collect()
        });
        CheckpointTuple {
            config: address(&checkpoint.id),
            parent_config: saved.parent_id.as_ref().map(address),
            metadata: saved.metadata.clone(),
            checkpoint,
            pending_writes,
        }
    }

    /// Removes all but the `keep_last` newest checkpoints and whatever only they referenced.
    fn prune(&mut self, keep_last: usize) -> usize {
        let total = self.checkpoints.len();
        let removed = total.saturating_sub(keep_last);
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
        let referenced: HashSet<(&str, &str)> = checkpoints
            .values()
            .flat_map(|s| s.checkpoint.channel_versions.iter())
            .map(|(channel, version)| (channel.as_str(), version.as_str()))
            .collect();
        self.blobs.retain(|channel, versions| {
            versions.retain(|version, _| referenced.contains(&(channel.as_str(), version.as_str())));
            !versions.is_empty()
        });
        removed
    }
}

/// The namespace at `(thread_id, checkpoint_ns)`, created when missing.
fn namespace_mut<'a>(threads: &'a mut Threads, thread_id: &str, checkpoint_ns: &str) -> &'a mut Namespace {
    // Look up before inserting so the common case (the thread exists) allocates no key. The
    // obvious `if let Some(..) = get_mut { return }` form is rejected by the borrow checker.
    if !threads.contains_key(thread_id) {
        threads.insert(thread_id.to_owned(), HashMap::new());
    }
    let namespaces = threads.get_mut(thread_id).expect("inserted above");
    if !namespaces.contains_key(checkpoint_ns) {
        namespaces.insert(checkpoint_ns.to_owned(), Namespace::default());
    }
    namespaces.get_mut(checkpoint_ns).expect("inserted above")
}

impl Checkpointer for InMemoryCheckpointer {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let threads = self.threads.read();
        let Some(ns) = threads.get(&config.thread_id).and_then(|t| t.get(&config.checkpoint_ns)) else {
            return Ok(None);
        };
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
        let upper = options.before.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let wanted = |saved: &Saved| options.filter.as_ref().is_none_or(|f| saved.metadata.matches(f));
        let threads = self.threads.read();

        let Some(config) = config else {
            // Every thread and namespace: gather the candidates and order them by id, as the SQL
            // savers' `ORDER BY checkpoint_id DESC` does. Ties (the same id in two places) are
            // broken by thread and namespace so the order is deterministic.
            let mut all: Vec<(&str, &str, &Namespace, &str, &Saved)> = Vec::new();
            for (thread_id, namespaces) in threads.iter() {
                for (ns_name, ns) in namespaces {
                    for (id, saved) in ns.checkpoints.range::<str, _>((Bound::Unbounded, upper)) {
                        all.push((thread_id, ns_name, ns, id, saved));
                    }
                }
            }
            all.sort_unstable_by(|a, b| (b.3, b.0, b.1).cmp(&(a.3, a.0, a.1)));
            return Ok(all
                .into_iter()
                .filter(|c| wanted(c.4))
                .take(limit)
                .map(|(thread_id, ns_name, ns, _, saved)| ns.tuple(thread_id, ns_name, saved))
                .collect());
        };

        let Some(ns) = threads.get(&config.thread_id).and_then(|t| t.get(&config.checkpoint_ns)) else {
            return Ok(Vec::new());
        };
        Ok(ns
            .checkpoints
            .range::<str, _>((Bound::Unbounded, upper))
            .rev()
            // A config pinned to one checkpoint lists only that one, as LangGraph's savers do.
            .filter(|(id, _)| config.checkpoint_id.as_ref().is_none_or(|pinned| pinned == *id))
            .filter(|(_, saved)| wanted(saved))
            .take(limit)
            .map(|(_, saved)| ns.tuple(&config.thread_id, &config.checkpoint_ns, saved))
            .collect())
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        mut checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        let mut values = std::mem::take(&mut checkpoint.channel_values);
        let id = checkpoint.id.clone();
        let saved = Saved { checkpoint, metadata, parent_id: config.checkpoint_id.clone() };
        {
            let mut threads = self.threads.write();
            let ns = namespace_mut(&mut threads, &config.thread_id, &config.checkpoint_ns);
            for (channel, version) in new_versions {
                // Moves the value out of the checkpoint: no clone at all on the hot path.
                let value = values.remove(&channel);
                ns.blobs.entry(channel).or_default().insert(version, value);
            }
            ns.checkpoints.insert(id.clone(), saved);
        }
        // `values` now holds only channels not in `new_versions`; they are dropped here, outside
        // the lock, because their versions' blobs were stored by an earlier put.
        drop(values);
        Ok(CheckpointConfig {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            checkpoint_id: Some(id),
        })
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let Some(checkpoint_id) = &config.checkpoint_id else {
            return Err(CheckpointError::Invalid(
                "put_writes needs a config with a checkpoint_id".to_owned(),
            ));
        };
        // Build the records before taking the lock so it is held only for the inserts.
        let records: Vec<((String, i64), SavedWrite)> = writes
            .into_iter()
            .enumerate()
            .map(|(position, (channel, value))| {
                let idx = write_index(&channel, position);
                ((task_id.to_owned(), idx), SavedWrite { channel, value, task_path: task_path.to_owned() })
            })
            .collect();
        let mut threads = self.threads.write();
        let ns = namespace_mut(&mut threads, &config.thread_id, &config.checkpoint_ns);
        if !ns.writes.contains_key(checkpoint_id) {
            ns.writes.insert(checkpoint_id.clone(), BTreeMap::new());
        }
        let stored = ns.writes.get_mut(checkpoint_id).expect("inserted above");
        for (key, write) in records {
            if key.1 < 0 {
                // Special channels (`__error__`, `__interrupt__`, ...): the latest write wins.
                stored.insert(key, write);
            } else {
                // Regular writes are idempotent: a retried task must not change what was saved.
                stored.entry(key).or_insert(write);
            }
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
            cp.channel_values.insert((*channel).to_owned(), ChannelValue::new(*value));
            cp.channel_versions.insert((*channel).to_owned(), version.clone());
            new_versions.insert((*channel).to_owned(), version);
        }
        let meta = CheckpointMetadata::new(CheckpointSource::Loop, step);
        block_on(saver.put(config, cp, meta, new_versions)).unwrap()
    }

    fn blob_count(saver: &InMemoryCheckpointer) -> usize {
        let threads = saver.threads.read();
        threads.values().flat_map(HashMap::values).flat_map(|ns| ns.blobs.values()).map(HashMap::len).sum()
    }

    #[test]
    fn put_shares_values_instead_of_copying() {
        let saver = InMemoryCheckpointer::new();
        let value = ChannelValue::new(vec![1_u8; 64]);
        let ChannelValue::Live(arc) = &value else { unreachable!() };
        let version = next_version(None);
        let cp = Checkpoint {
            id: checkpoint_id(0),
            channel_values: [("a".to_owned(), value.clone())].into(),
            channel_versions: [("a".to_owned(), version.clone())].into(),
            ..Checkpoint::default()
        };
        let config = CheckpointConfig::thread("t");
        block_on(saver.put(
            &config,
            cp,
            CheckpointMetadata::new(CheckpointSource::Loop, 0),
            [("a".to_owned(), version)].into(),
        ))
        .unwrap();
        let tuple = block_on(saver.get_tuple(&config)).unwrap().unwrap();
        let ChannelValue::Live(back) = &tuple.checkpoint.channel_values["a"] else { panic!("not live") };
        assert!(std::sync::Arc::ptr_eq(arc, back));
    }

    #[test]
    fn prune_keeps_the_newest_per_namespace_and_drops_orphans() {
        let saver = InMemoryCheckpointer::new();
        let root = CheckpointConfig::thread("t");
        let child = CheckpointConfig::thread("t").with_ns("child:1");
        let mut last = root.clone();
        for step in 0..5 {
            last = put_step(&saver, &last, step, &[("a", step)]);
            block_on(saver.put_writes(&last, vec![("a".into(), ChannelValue::new(step))], "task", ""))
                .unwrap();
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
        let version = next_version(Some(&cp.channel_versions["a"]));
        cp.channel_versions.insert("a".into(), version.clone());
        cp.channel_values.insert("a".into(), ChannelValue::new(10_i64));
        let meta = CheckpointMetadata::new(CheckpointSource::Loop, 1);
        block_on(saver.put(&first, cp, meta, [("a".to_owned(), version)].into())).unwrap();

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
        let err = block_on(saver.put_writes(&CheckpointConfig::thread("t"), vec![], "task", "")).unwrap_err();
        assert!(matches!(err, CheckpointError::Invalid(_)), "{err}");
    }

    #[test]
    fn debug_shows_counts_only() {
        let saver = InMemoryCheckpointer::new();
        put_step(&saver, &CheckpointConfig::thread("t"), 0, &[("a", 1)]);
        assert_eq!(format!("{saver:?}"), "InMemoryCheckpointer { threads: 1, checkpoints: 1 }");
    }
}
