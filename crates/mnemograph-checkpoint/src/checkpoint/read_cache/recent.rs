//! [`RecentCheckpoints`]: the memory half of [`ReadCache`](super::ReadCache), the checkpoint
//! stored last per (thread, namespace), bounded, with the saver's fingerprint of its stored form.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointTuple, PendingWrite,
};

/// One remembered checkpoint.
#[derive(Debug)]
pub(crate) struct Remembered<F> {
    /// The checkpoint, with all its channel values.
    pub(crate) checkpoint: Checkpoint,
    /// Its metadata.
    pub(crate) metadata: CheckpointMetadata,
    /// Its parent's id.
    pub(crate) parent: Option<String>,
    /// What the saver compares with the stored checkpoint to tell it is unchanged.
    pub(crate) fingerprint: F,
    /// When it was remembered, for eviction.
    stamp: u64,
}

impl<F> Remembered<F> {
    /// The tuple this checkpoint makes at `config`'s address, with `pending_writes` as the server
    /// reported them.
    pub(crate) fn tuple(
        &self,
        config: &CheckpointConfig,
        pending_writes: Vec<PendingWrite>,
    ) -> CheckpointTuple {
        let at = |id: &str| CheckpointConfig {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            checkpoint_id: Some(id.to_owned()),
        };
        CheckpointTuple {
            config: at(&self.checkpoint.id),
            checkpoint: self.checkpoint.clone(),
            metadata: self.metadata.clone(),
            parent_config: self.parent.as_deref().map(at),
            pending_writes,
        }
    }
}

/// The entries by thread id and namespace, and the clock that stamps them.
#[derive(Debug)]
struct Entries<F> {
    /// Keyed by thread id, then namespace.
    map: HashMap<(String, String), Arc<Remembered<F>>>,
    /// Incremented by every `remember`.
    clock: u64,
}

/// The last checkpoint stored per (thread, namespace), for at most `capacity` of them; the least
/// recently written are forgotten first.
#[derive(Debug)]
pub(crate) struct RecentCheckpoints<F> {
    /// The entries.
    entries: Mutex<Entries<F>>,
    /// At most this many entries.
    capacity: usize,
}

impl<F> RecentCheckpoints<F> {
    /// An empty memory of at most `capacity` entries (0: remembers nothing).
    pub(crate) fn new(capacity: usize) -> Self {
        Self { entries: Mutex::new(Entries { map: HashMap::new(), clock: 0 }), capacity }
    }

    /// How many (thread, namespace) pairs it remembers at most.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records `checkpoint`, just stored as the child of `parent` (its parent's address) with
    /// `new_versions`, and the saver's `fingerprint` of the stored form. A saver storing several
    /// checkpoints at once records each, in order.
    ///
    /// A checkpoint is remembered only when it is known what a read of it returns for every
    /// versioned channel: its value is in `channel_values`, or the channel is in `new_versions`
    /// (stored now, so a missing value reads back as missing), or the remembered parent has the
    /// same version (whose value, or absence, it inherits). A caller may leave out the values of
    /// unchanged channels, which savers read from the blobs an earlier checkpoint stored; when
    /// those are not known here, the checkpoint is not remembered, and whatever was remembered
    /// for its namespace is forgotten.
    pub(crate) fn remember(
        &self,
        parent: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
        fingerprint: F,
    ) {
        if self.capacity == 0 {
            return;
        }
        let mut guard = self.entries.lock();
        let Entries { map, clock } = &mut *guard;
        let key = (parent.thread_id.clone(), parent.checkpoint_ns.clone());
        let previous = map.get(&key).filter(|e| parent.checkpoint_id.as_ref() == Some(&e.checkpoint.id));
        let mut inherited = Vec::new();
        for (channel, version) in &checkpoint.channel_versions {
            if checkpoint.channel_values.contains_key(channel) || new_versions.get(channel) == Some(version) {
                continue;
            }
            match previous.filter(|p| p.checkpoint.channel_versions.get(channel) == Some(version)) {
                Some(p) => inherited.extend(p.checkpoint.channel_values.get_key_value(channel)),
                None => {
                    map.remove(&key);
                    return;
                }
            }
        }
        // Values are shared `Arc`s: this copies maps, not the conversation.
        let mut checkpoint = checkpoint.clone();
        for (channel, value) in inherited {
            checkpoint.channel_values.insert(Arc::clone(channel), value.clone());
        }
        *clock += 1;
        let entry = Remembered {
            checkpoint,
            metadata: metadata.clone(),
            parent: parent.checkpoint_id.clone(),
            fingerprint,
            stamp: *clock,
        };
        map.insert(key, Arc::new(entry));
        if map.len() > self.capacity {
            // Evict the oldest eighth at once, so eviction is not a scan per put.
            let mut stamps: Vec<u64> = map.values().map(|e| e.stamp).collect();
            let cut = stamps.len() / 8;
            let (_, &mut oldest_kept, _) = stamps.select_nth_unstable(cut);
            map.retain(|_, e| e.stamp >= oldest_kept);
        }
    }

    /// Forgets every namespace of `thread_id` (after a delete or prune).
    pub(crate) fn forget_thread(&self, thread_id: &str) {
        self.entries.lock().map.retain(|(thread, _), _| thread != thread_id);
    }

    /// Forgets every checkpoint whose metadata `run_id` is one of `run_ids` (after a
    /// `delete_for_runs`).
    pub(crate) fn forget_runs(&self, run_ids: &[String]) {
        self.entries.lock().map.retain(|_, e| match e.metadata.run_id() {
            Some(run) => !run_ids.iter().any(|r| r == run),
            None => true,
        });
    }

    /// The remembered checkpoint of `config`'s namespace, when `config` asks for the latest or
    /// for that very checkpoint. The saver must still confirm with its server that it is the
    /// latest and unchanged before answering with it.
    pub(crate) fn candidate(&self, config: &CheckpointConfig) -> Option<Arc<Remembered<F>>> {
        let guard = self.entries.lock();
        let key = (config.thread_id.clone(), config.checkpoint_ns.clone());
        let entry = guard.map.get(&key)?;
        match &config.checkpoint_id {
            Some(id) if *id != entry.checkpoint.id => None,
            _ => Some(Arc::clone(entry)),
        }
    }

    /// How many pairs it remembers now.
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().map.len()
    }

    /// Whether it remembers nothing.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::CheckpointSource;

    fn remember(recent: &RecentCheckpoints<()>, thread: &str, id: &str) {
        let checkpoint = Checkpoint { id: id.to_owned(), ..Checkpoint::default() };
        let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
        recent.remember(
            &CheckpointConfig::thread(thread),
            &checkpoint,
            &metadata,
            &ChannelVersions::new(),
            (),
        );
    }

    #[test]
    fn a_remembered_checkpoint_makes_its_tuple() {
        let recent = RecentCheckpoints::new(16);
        let parent = CheckpointConfig::thread("t1").with_checkpoint_id("a");
        let checkpoint = Checkpoint { id: "b".into(), ..Checkpoint::default() };
        let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 1);
        recent.remember(&parent, &checkpoint, &metadata, &checkpoint.channel_versions, "stored text");
        let entry = recent.candidate(&CheckpointConfig::thread("t1")).expect("remembered");
        assert_eq!(entry.fingerprint, "stored text");
        let tuple = entry.tuple(&CheckpointConfig::thread("t1"), Vec::new());
        assert_eq!(tuple.config.checkpoint_id.as_deref(), Some("b"));
        assert_eq!(tuple.parent_config, Some(parent));
    }

    #[test]
    fn the_least_recently_written_threads_are_forgotten_first() {
        let recent = RecentCheckpoints::new(64);
        for t in 0..100 {
            remember(&recent, &format!("t{t}"), "a");
        }
        assert!(recent.len() <= 64, "{} entries", recent.len());
        assert!(recent.candidate(&CheckpointConfig::thread("t99")).is_some(), "the newest is kept");
        assert!(recent.candidate(&CheckpointConfig::thread("t0")).is_none(), "the oldest is gone");
    }

    #[test]
    fn only_the_latest_or_the_remembered_id_is_a_candidate() {
        let recent = RecentCheckpoints::new(8);
        remember(&recent, "t", "a");
        remember(&recent, "t", "b");
        let latest = CheckpointConfig::thread("t");
        assert_eq!(recent.candidate(&latest).map(|e| e.checkpoint.id.clone()), Some("b".to_owned()));
        assert!(recent.candidate(&latest.clone().with_checkpoint_id("b")).is_some());
        assert!(recent.candidate(&latest.clone().with_checkpoint_id("a")).is_none());
        assert!(recent.candidate(&latest.clone().with_ns("child")).is_none());
        recent.forget_thread("t");
        assert!(recent.candidate(&latest).is_none());
        assert!(recent.is_empty());
        let nothing = RecentCheckpoints::new(0);
        remember(&nothing, "t", "a");
        assert!(nothing.candidate(&latest).is_none());
    }

    #[test]
    fn a_checkpoint_without_the_values_of_old_versions_is_not_remembered() {
        let recent = RecentCheckpoints::new(8);
        let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 1);
        let parent = CheckpointConfig::thread("t").with_checkpoint_id("a");
        let root = CheckpointConfig::thread("t");
        let mut checkpoint = Checkpoint { id: "b".into(), ..Checkpoint::default() };
        checkpoint.channel_versions.insert("new".into(), "2".into());
        checkpoint.channel_versions.insert("empty".into(), "2".into());
        checkpoint.channel_versions.insert("kept".into(), "1".into());
        checkpoint.channel_values.insert("new".into(), crate::checkpoint::ChannelValue::Null);
        let new: ChannelVersions = [("new".into(), "2".into()), ("empty".into(), "2".into())].into();
        remember(&recent, "t", "z");
        // `kept` has a version whose value was stored earlier, is not passed along, and the
        // remembered checkpoint is not the parent.
        recent.remember(&parent, &checkpoint, &metadata, &new, ());
        assert!(recent.candidate(&root).is_none(), "the older entry is forgotten too");

        // The parent is remembered with `kept` at that version: its value is inherited.
        let mut first = Checkpoint { id: "a".into(), ..Checkpoint::default() };
        first.channel_versions.insert("kept".into(), "1".into());
        first.channel_values.insert("kept".into(), crate::checkpoint::ChannelValue::new(7_i64));
        recent.remember(&root, &first, &metadata, &first.channel_versions.clone(), ());
        recent.remember(&parent, &checkpoint, &metadata, &new, ());
        let entry = recent.candidate(&root).expect("known through its parent");
        assert_eq!(entry.checkpoint.channel_values["kept"].decode::<i64>().unwrap(), 7);
        assert!(!entry.checkpoint.channel_values.contains_key("empty"), "stored empty now");

        // A parent with another version of `kept` does not say what this one holds.
        first.channel_versions.insert("kept".into(), "0".into());
        recent.remember(&root, &first, &metadata, &first.channel_versions.clone(), ());
        recent.remember(&parent, &checkpoint, &metadata, &new, ());
        assert!(recent.candidate(&root).is_none());
    }
}
