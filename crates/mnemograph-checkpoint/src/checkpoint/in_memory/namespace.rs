//! What the in-memory saver keeps for one namespace of one thread.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use super::compact::Compact;
use super::sorted::Sorted;
use crate::checkpoint::channel_versions::cmp_shared;
use crate::checkpoint::{
    ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple,
    PendingWrite,
};

/// The data of one namespace of one thread.
///
/// Checkpoint ids are shared `Arc<str>`s: the same id is a checkpoint's key, its child's parent
/// id and the key of its pending writes, stored once.
#[derive(Default, Clone)]
pub(super) struct Namespace {
    /// Checkpoint id → checkpoint. Ids are uuid6 strings whose order is creation order, so the
    /// newest is the last entry and newest-first is a reverse iteration. Boxed so that growing
    /// the list moves pointers, not ~200-byte records.
    pub(super) checkpoints: Sorted<Arc<str>, Box<Saved>>,
    /// Channel → its versions' values.
    pub(super) blobs: Sorted<Arc<str>, Versions>,
    /// Checkpoint id → its pending writes.
    pub(super) writes: Sorted<Arc<str>, Writes>,
}

/// The stored values of one channel: `(version, value)` sorted by version. `None` is
/// LangGraph's `"empty"` blob: the channel was in `new_versions` but had no value; reading it
/// yields no value.
pub(super) type Versions = Sorted<Arc<str>, Option<ChannelValue>>;

/// A checkpoint as stored.
#[derive(Clone)]
pub(super) struct Saved {
    /// The checkpoint without its id (the key) and values (they live in the blobs).
    checkpoint: Compact,
    /// Its metadata.
    metadata: CheckpointMetadata,
    /// The id of the checkpoint it was derived from.
    parent_id: Option<Arc<str>>,
}

impl Saved {
    /// Its metadata.
    pub(super) fn metadata(&self) -> &CheckpointMetadata {
        &self.metadata
    }
}

/// `(task_id, idx)` of a pending write. The task id is shared by all writes of one `put_writes`
/// call, so saving a task's writes allocates it once rather than once per write.
type WriteKey = (Arc<str>, i64);

/// The pending writes of one checkpoint, sorted by `(task_id, idx)` so reads need no sort.
#[derive(Default, Clone)]
pub(super) struct Writes(Vec<(WriteKey, SavedWrite)>);

/// A pending write as stored: channel and value. The writing task's path is not kept: reads
/// order writes by `(task_id, idx)`, as `langgraph-checkpoint-mysql` 3.0.0 does, so every saver
/// of this workspace returns them in one order (the engine applies them in task-path order
/// whatever order they come in).
type SavedWrite = (String, ChannelValue);

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

impl Namespace {
    /// The id of the newest checkpoint.
    pub(super) fn latest_id(&self) -> Option<&Arc<str>> {
        self.checkpoints.last().map(|(id, _)| id)
    }

    /// Stores `checkpoint` (whose values are taken out) with the values of the channels in
    /// `new_versions` as blobs, as a child of `parent_id`.
    pub(super) fn save(
        &mut self,
        mut checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: &ChannelVersions,
        parent_id: Option<&str>,
    ) {
        let values = std::mem::take(&mut checkpoint.channel_values);
        // Both maps are sorted by channel, so one merged pass pairs each new version with its
        // value (moved, not cloned) without a lookup per channel. Values of channels not in
        // `new_versions` are dropped (their blobs were stored by an earlier put); dropping a
        // shared value under the lock is only a reference-count decrement.
        let mut values = values.into_iter().peekable();
        for (channel, version) in new_versions {
            let mut value = None;
            while let Some((next, _)) = values.peek() {
                match cmp_shared(next, channel) {
                    Ordering::Less => drop(values.next()),
                    Ordering::Equal => {
                        value = values.next().map(|(_, v)| v);
                        break;
                    }
                    Ordering::Greater => break,
                }
            }
            self.blobs.get_or_insert(channel, || Arc::clone(channel)).insert(Arc::clone(version), value);
        }
        // The parent is almost always the latest checkpoint, whose id and unchanged parts the
        // new one shares.
        let parent_id = parent_id.map(|p| match self.checkpoints.get_key_value(p) {
            Some((id, _)) => Arc::clone(id),
            None => Arc::from(p),
        });
        let previous = self.checkpoints.last().map(|(_, s)| &s.checkpoint);
        let id: Arc<str> = Arc::from(std::mem::take(&mut checkpoint.id));
        let checkpoint = Compact::new(checkpoint, previous);
        self.checkpoints.insert(id, Box::new(Saved { checkpoint, metadata, parent_id }));
    }

    /// Saves the writes of task `task_id` against checkpoint `checkpoint_id`. Special channels
    /// (`__error__`, `__interrupt__`, ...) have negative indexes and the latest write wins;
    /// regular writes are idempotent, so a retried task cannot change what was saved.
    pub(super) fn save_writes(
        &mut self,
        checkpoint_id: &str,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
    ) {
        // The key is the checkpoint's own id when the checkpoint is stored (it almost always is).
        let key = || match self.checkpoints.get_key_value(checkpoint_id) {
            Some((id, _)) => Arc::clone(id),
            None => Arc::from(checkpoint_id),
        };
        let key = match self.writes.get(checkpoint_id) {
            Some(_) => None,
            None => Some(key()),
        };
        let stored = self.writes.get_or_insert(checkpoint_id, || key.expect("built when missing"));
        // Exactly: a checkpoint usually gets one batch, and the amortized growth of `reserve`
        // left room for four writes in each checkpoint's list.
        stored.0.reserve_exact(writes.len());
        let task_id: Arc<str> = task_id.into();
        for (position, (channel, value)) in writes.into_iter().enumerate() {
            let idx = crate::checkpoint::write_index(&channel, position);
            stored.save((Arc::clone(&task_id), idx), (channel, value), idx < 0);
        }
    }

    /// The values of a checkpoint, from the blobs of each channel's version.
    fn load_values(&self, versions: &ChannelVersions) -> BTreeMap<Arc<str>, ChannelValue> {
        let stored = |(channel, version): (&Arc<str>, &Arc<str>)| {
            let value = self.blobs.get(&**channel)?.get(&**version)?.as_ref()?;
            // `Arc` clones of the shared name and value.
            Some((Arc::clone(channel), value.clone()))
        };
        versions.iter().filter_map(stored).collect()
    }

    /// The pending writes saved against `checkpoint_id`, in `(task_id, idx)` order.
    fn pending_writes(&self, checkpoint_id: &str) -> Vec<PendingWrite> {
        let Some(Writes(writes)) = self.writes.get(checkpoint_id) else { return Vec::new() };
        let pending = |((task_id, _), (channel, value)): &(WriteKey, SavedWrite)| PendingWrite {
            task_id: task_id.to_string(),
            channel: channel.clone(),
            value: value.clone(),
        };
        writes.iter().map(pending).collect()
    }

    /// The full tuple of stored checkpoint `id`.
    pub(super) fn tuple(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        id: &str,
        saved: &Saved,
    ) -> CheckpointTuple {
        let address = |id: &str| CheckpointConfig {
            thread_id: thread_id.to_owned(),
            checkpoint_ns: checkpoint_ns.to_owned(),
            checkpoint_id: Some(id.to_owned()),
        };
        let mut checkpoint = saved.checkpoint.to_checkpoint(id);
        checkpoint.channel_values = self.load_values(&checkpoint.channel_versions);
        CheckpointTuple {
            config: address(id),
            parent_config: saved.parent_id.as_deref().map(address),
            metadata: saved.metadata.clone(),
            pending_writes: self.pending_writes(id),
            checkpoint,
        }
    }

    /// Removes all but the `keep_last` newest checkpoints and whatever only they referenced.
    pub(super) fn prune(&mut self, keep_last: usize) -> usize {
        let removed = self.checkpoints.len().saturating_sub(keep_last);
        // Ids sort by creation time: the first `removed` are the oldest.
        self.checkpoints.drop_first(removed);
        let checkpoints = &self.checkpoints;
        self.writes.retain(|id, _| checkpoints.get(&**id).is_some());
        self.drop_unreferenced_blobs();
        removed
    }

    /// Removes the checkpoints whose metadata `run_id` is one of `run_ids`, their pending
    /// writes, and the blobs only they referenced; returns how many checkpoints went.
    pub(super) fn delete_runs(&mut self, run_ids: &[String]) -> usize {
        let of_runs =
            |saved: &Saved| saved.metadata.run_id().is_some_and(|r| run_ids.iter().any(|id| id == r));
        let doomed: HashSet<Arc<str>> =
            self.checkpoints.iter().filter(|(_, s)| of_runs(s)).map(|(id, _)| Arc::clone(id)).collect();
        if doomed.is_empty() {
            return 0;
        }
        self.checkpoints.retain(|id, _| !doomed.contains(id));
        // Only the writes of the deleted checkpoints: writes saved against an id that was never
        // stored belong to no run this call can name.
        self.writes.retain(|id, _| !doomed.contains(id));
        self.drop_unreferenced_blobs();
        doomed.len()
    }

    /// Drops every blob no stored checkpoint points at.
    fn drop_unreferenced_blobs(&mut self) {
        let versions = self.checkpoints.iter().flat_map(|(_, s)| s.checkpoint.channel_versions());
        let referenced: HashSet<(&str, &str)> =
            versions.map(|(channel, version)| (&**channel, &**version)).collect();
        self.blobs.retain(|channel, versions| {
            versions.retain(|v, _| referenced.contains(&(&**channel, &**v)));
            !versions.is_empty()
        });
    }
}
