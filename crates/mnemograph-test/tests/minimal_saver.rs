//! A saver written against the small contract alone: LangGraph's five operations and an atomic
//! `commit`, over a map behind one lock, in the layout of LangGraph's `InMemorySaver` (checkpoints
//! without their values, one blob per channel version, writes per checkpoint). It passes the whole
//! conformance suite of the base operations, which is what a new backend (Postgres, SQLite, ...)
//! has to do too; LangGraph's extended capabilities stay at their `Unsupported` defaults, so it
//! runs the suite with `base`.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use mnemograph_core::checkpoint::backend::write_index;
use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, ExpectParent, ListOptions, PendingWrite,
};
use mnemograph_core::value::ChannelValue;

/// A checkpoint as stored: without its values, which are blobs.
struct Stored {
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    parent: Option<String>,
}

/// The writes of one checkpoint by (task id, index): (channel, value).
type Writes = BTreeMap<(String, i64), (String, ChannelValue)>;

/// One namespace of a thread.
#[derive(Default)]
struct Namespace {
    /// By checkpoint id; ids sort by time.
    checkpoints: BTreeMap<String, Stored>,
    /// By (channel, version): the value stored for it.
    blobs: HashMap<(Arc<str>, Arc<str>), ChannelValue>,
    /// By checkpoint id.
    writes: HashMap<String, Writes>,
}

/// Namespaces by (thread id, namespace).
type Threads = BTreeMap<(String, String), Namespace>;

#[derive(Default)]
struct MinimalSaver {
    threads: Mutex<Threads>,
}

fn key(config: &CheckpointConfig) -> (String, String) {
    (config.thread_id.clone(), config.checkpoint_ns.clone())
}

/// The tuple of checkpoint `id` of namespace `ns`, with its values and pending writes.
fn tuple(thread: &(String, String), ns: &Namespace, id: &str) -> Option<CheckpointTuple> {
    let stored = ns.checkpoints.get(id)?;
    let at = |id: &str| CheckpointConfig::thread(&thread.0).with_ns(&thread.1).with_checkpoint_id(id);
    let mut checkpoint = stored.checkpoint.clone();
    for (channel, version) in &checkpoint.channel_versions {
        if let Some(value) = ns.blobs.get(&(Arc::clone(channel), Arc::clone(version))) {
            checkpoint.channel_values.insert(Arc::clone(channel), value.clone());
        }
    }
    let writes = ns.writes.get(id).into_iter().flatten();
    let pending_writes = writes
        .map(|((task_id, _), (channel, value))| PendingWrite {
            task_id: task_id.clone(),
            channel: channel.clone(),
            value: value.clone(),
        })
        .collect();
    Some(CheckpointTuple {
        config: at(id),
        checkpoint,
        metadata: stored.metadata.clone(),
        parent_config: stored.parent.as_deref().map(at),
        pending_writes,
    })
}

/// Stores `checkpoint` as the child of `config`'s checkpoint, its values as blobs.
fn put(
    threads: &mut Threads,
    config: &CheckpointConfig,
    mut checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: &ChannelVersions,
) -> CheckpointConfig {
    let ns = threads.entry(key(config)).or_default();
    let values = std::mem::take(&mut checkpoint.channel_values);
    for (channel, version) in new_versions {
        if let Some(value) = values.get(channel) {
            ns.blobs.insert((Arc::clone(channel), Arc::clone(version)), value.clone());
        }
    }
    let id = checkpoint.id.clone();
    ns.checkpoints.insert(id.clone(), Stored { checkpoint, metadata, parent: config.checkpoint_id.clone() });
    config.clone().with_checkpoint_id(id)
}

/// Stores a task's writes against `config`'s checkpoint: a write already stored stays, except on
/// the special channels, which are replaced.
fn put_writes(
    threads: &mut Threads,
    config: &CheckpointConfig,
    writes: Vec<(String, ChannelValue)>,
    task_id: &str,
) -> Result<(), CheckpointError> {
    let Some(id) = &config.checkpoint_id else {
        return Err(CheckpointError::Invalid("put_writes needs a checkpoint id".to_owned()));
    };
    let stored = threads.entry(key(config)).or_default().writes.entry(id.clone()).or_default();
    for (position, (channel, value)) in writes.into_iter().enumerate() {
        let idx = write_index(&channel, position);
        let at = (task_id.to_owned(), idx);
        if idx < 0 || !stored.contains_key(&at) {
            stored.insert(at, (channel, value));
        }
    }
    Ok(())
}

impl Checkpointer for MinimalSaver {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let threads = self.threads.lock().unwrap();
        let thread = key(config);
        let Some(ns) = threads.get(&thread) else { return Ok(None) };
        let id = match &config.checkpoint_id {
            Some(id) => Some(id.as_str()),
            None => ns.checkpoints.keys().next_back().map(String::as_str),
        };
        Ok(id.and_then(|id| tuple(&thread, ns, id)))
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        let threads = self.threads.lock().unwrap();
        let mut found = Vec::new();
        for (thread, ns) in threads.iter() {
            if config.is_some_and(|c| key(c) != *thread) {
                continue;
            }
            for (id, stored) in &ns.checkpoints {
                let pinned = config.and_then(|c| c.checkpoint_id.as_ref()).is_none_or(|p| p == id);
                let before = options.before.as_ref().is_none_or(|b| id < b);
                let wanted = options.filter.as_ref().is_none_or(|f| stored.metadata.matches(f));
                if pinned && before && wanted {
                    found.extend(tuple(thread, ns, id));
                }
            }
        }
        found.sort_by(|a, b| b.checkpoint.id.cmp(&a.checkpoint.id));
        found.truncate(options.limit.unwrap_or(usize::MAX));
        Ok(found)
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        Ok(put(&mut self.threads.lock().unwrap(), config, checkpoint, metadata, &new_versions))
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        _task_path: &str,
    ) -> Result<(), CheckpointError> {
        put_writes(&mut self.threads.lock().unwrap(), config, writes, task_id)
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.threads.lock().unwrap().retain(|(thread, _), _| thread != thread_id);
        Ok(())
    }

    /// The parent check and every link under the one lock: atomic.
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        if commit.chain.is_empty() {
            return Err(CheckpointError::Invalid("a commit needs a checkpoint".to_owned()));
        }
        if commit.chain[0].writes.is_some() && commit.parent.checkpoint_id.is_none() {
            // Checked before anything is stored: a commit stores all of its links or none.
            return Err(CheckpointError::Invalid("put_writes needs a checkpoint id".to_owned()));
        }
        let mut threads = self.threads.lock().unwrap();
        let mut parent = commit.parent;
        if commit.expect == ExpectParent::Latest {
            let latest = threads.get(&key(&parent)).and_then(|ns| ns.checkpoints.keys().next_back());
            if latest != parent.checkpoint_id.as_ref() {
                return Err(CheckpointError::conflict(&parent, latest.cloned()));
            }
        }
        for link in commit.chain {
            if let Some(batch) = link.writes {
                put_writes(&mut threads, &parent, batch.writes, &batch.task_id)?;
            }
            parent = put(&mut threads, &parent, link.checkpoint, link.metadata, &link.new_versions);
        }
        Ok(parent)
    }
}

async fn saver() -> MinimalSaver {
    MinimalSaver::default()
}

mnemograph_test::checkpointer_conformance!(base saver);

/// The defaults of the extended capabilities refuse, change nothing, and name the operation.
#[tokio::test]
async fn extended_capabilities_default_to_unsupported() {
    let saver = MinimalSaver::default();
    let config = CheckpointConfig::thread("t");
    let checkpoint = Checkpoint { id: "1".into(), ..Checkpoint::default() };
    let metadata = CheckpointMetadata::new(mnemograph_core::checkpoint::CheckpointSource::Loop, 0);
    saver.put(&config, checkpoint, metadata, ChannelVersions::new()).await.unwrap();
    let unsupported = |r: Result<(), CheckpointError>| match r {
        Err(CheckpointError::Unsupported { operation }) => operation,
        other => panic!("expected Unsupported, got {other:?}"),
    };
    let all = ["t".to_owned()];
    assert_eq!(unsupported(saver.delete_for_runs(&all).await), "delete_for_runs");
    assert_eq!(unsupported(saver.copy_thread("t", "u").await), "copy_thread");
    let strategy = mnemograph_core::checkpoint::PruneStrategy::Delete;
    assert_eq!(unsupported(saver.prune(&all, strategy).await), "prune");
    assert!(saver.get_tuple(&config).await.unwrap().is_some(), "nothing was deleted");
}
