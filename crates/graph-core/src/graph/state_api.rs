//! Reading and editing a thread's state: `get_state`, `get_state_history`, `update_state`.

use super::compiled::CompiledGraph;
use crate::checkpoint::{
    uuid6, ChannelVersions, CheckpointConfig, CheckpointMetadata, CheckpointSource, CheckpointTuple,
    ListOptions, WRITES_IDX_MAP,
};
use crate::command::NodeOutput;
use crate::config::RunConfig;
use crate::error::{Error, Result};
use crate::graph::builder::START;
use crate::interrupt::Interrupt;
use crate::pregel::persist::{self, CheckpointCache, VersionText};
use crate::pregel::task::{self, Task};
use crate::state::State;

/// A task of a snapshot: a node that runs next, or that failed.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SnapshotTask {
    /// Task id.
    pub id: String,
    /// Node.
    pub name: String,
    /// The error it failed with last time, if any.
    pub error: Option<String>,
    /// The interrupts it is waiting on.
    pub interrupts: Vec<Interrupt>,
}

/// A thread's state at one checkpoint (LangGraph's `StateSnapshot`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StateSnapshot<S> {
    /// The state.
    pub values: S,
    /// The nodes that run next.
    pub next: Vec<String>,
    /// The checkpoint's address (`None` for a thread with no checkpoint).
    pub config: Option<CheckpointConfig>,
    /// The checkpoint's metadata.
    pub metadata: Option<CheckpointMetadata>,
    /// When the checkpoint was written.
    pub created_at: Option<String>,
    /// The parent checkpoint's address.
    pub parent_config: Option<CheckpointConfig>,
    /// The tasks that run next, with the errors of those that failed.
    pub tasks: Vec<SnapshotTask>,
    /// Every pending interrupt of those tasks.
    pub interrupts: Vec<Interrupt>,
    /// The states of subgraphs that are part-way through (stopped at an interrupt or a failure),
    /// filled by [`CompiledGraph::get_state_with_subgraphs`].
    pub subgraphs: Vec<StateSnapshot<S>>,
}

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    fn saver_config(&self, config: &RunConfig) -> Result<CheckpointConfig> {
        if self.checkpointer.is_none() {
            return Err(Error::NoCheckpointer);
        }
        config.checkpoint_config().ok_or(Error::MissingThreadId)
    }

    /// The state of a thread: its latest checkpoint (with the writes of tasks that already finished
    /// applied), or the checkpoint `config.checkpoint_id` names (as stored). A thread with no
    /// checkpoint gives an empty snapshot.
    ///
    /// # Errors
    /// No checkpointer or thread id, or a checkpointer failure.
    pub async fn get_state(&self, config: &RunConfig) -> Result<StateSnapshot<S>> {
        let cfg = self.saver_config(config)?;
        let saver = self.checkpointer.as_deref().ok_or(Error::NoCheckpointer)?;
        match saver.get_tuple(&cfg).await? {
            Some(t) => self.snapshot(t, config.checkpoint_id.is_none()),
            None => Ok(StateSnapshot {
                values: S::default(),
                next: Vec::new(),
                config: None,
                metadata: None,
                created_at: None,
                parent_config: None,
                tasks: Vec::new(),
                interrupts: Vec::new(),
                subgraphs: Vec::new(),
            }),
        }
    }

    /// Like [`get_state`](Self::get_state), with the state of every subgraph that is part-way
    /// through in [`StateSnapshot::subgraphs`], recursively (LangGraph's `get_state(subgraphs=True)`).
    ///
    /// # Errors
    /// As [`get_state`](Self::get_state).
    pub async fn get_state_with_subgraphs(&self, config: &RunConfig) -> Result<StateSnapshot<S>> {
        let mut snap = self.get_state(config).await?;
        self.fill_subgraphs(&mut snap).await?;
        Ok(snap)
    }

    fn fill_subgraphs<'a>(
        &'a self,
        snap: &'a mut StateSnapshot<S>,
    ) -> crate::checkpoint::BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let (Some(cfg), Some(saver)) = (snap.config.clone(), self.checkpointer.as_deref()) else {
                return Ok(());
            };
            let layout = &self.inner.layout;
            for task in &snap.tasks {
                let Some(child) = layout
                    .node(&task.name)
                    .and_then(|n| layout.nodes[n].node.as_ref())
                    .and_then(|n| n.0.subgraph())
                else {
                    continue;
                };
                let ns = format!("{}:{}", task::child_ns(&cfg.checkpoint_ns, &task.name), task.id);
                let child_cfg = CheckpointConfig::thread(cfg.thread_id.clone()).with_ns(ns);
                if let Some(t) = saver.get_tuple(&child_cfg).await? {
                    let mut child_snap = child.snapshot(t, true)?;
                    child.fill_subgraphs(&mut child_snap).await?;
                    snap.subgraphs.push(child_snap);
                }
            }
            Ok(())
        })
    }

    /// Every checkpoint of a thread, newest first.
    ///
    /// # Errors
    /// No checkpointer or thread id, or a checkpointer failure.
    pub async fn get_state_history(
        &self,
        config: &RunConfig,
        options: ListOptions,
    ) -> Result<Vec<StateSnapshot<S>>> {
        let mut cfg = self.saver_config(config)?;
        cfg.checkpoint_id = None;
        let saver = self.checkpointer.as_deref().ok_or(Error::NoCheckpointer)?;
        let tuples = saver.list(Some(&cfg), options).await?;
        tuples.into_iter().map(|t| self.snapshot(t, false)).collect()
    }

    fn snapshot(&self, t: CheckpointTuple, apply_pending: bool) -> Result<StateSnapshot<S>> {
        let layout = &self.inner.layout;
        let mut vt = VersionText::default();
        let mut ch = persist::from_checkpoint(layout, &t.checkpoint, &mut vt)
            .map_err(|e| persist::in_thread(e, &t.config.thread_id))?;
        let ns = &t.config.checkpoint_ns;
        let mut tasks = ch.prepare_tasks(layout, &t.checkpoint.id, ns, t.metadata.step + 1)?;
        let mut info = Vec::new();
        let mut done: Vec<Task<S>> = Vec::new();
        for mut task in tasks.drain(..) {
            let writes: Vec<_> = t.pending_writes.iter().filter(|w| *w.task_id == *task.id).collect();
            let error = writes
                .iter()
                .find(|w| w.channel == "__error__")
                .map(|w| w.value.decode::<String>().unwrap_or_else(|_| "error".to_owned()));
            let regular: Vec<_> = writes
                .iter()
                .copied()
                .filter(|w| !WRITES_IDX_MAP.iter().any(|(c, _)| *c == w.channel))
                .collect();
            let mut interrupts: Vec<Interrupt> = Vec::new();
            for w in writes.iter().filter(|w| w.channel == "__interrupt__") {
                interrupts.extend(w.value.decode::<Vec<Interrupt>>()?);
            }
            if apply_pending && error.is_none() && !regular.is_empty() {
                task.writes = Some(persist::pending_to_writes(layout, &regular)?);
                done.push(task);
            } else {
                info.push(SnapshotTask {
                    id: task.id.to_string(),
                    name: layout.nodes[task.node].name.to_string(),
                    error,
                    interrupts,
                });
            }
        }
        if !done.is_empty() {
            ch.apply_writes(layout, &mut done, None)?;
        }
        Ok(StateSnapshot {
            values: ch.state,
            next: info.iter().map(|t| t.name.clone()).collect(),
            config: Some(t.config),
            metadata: Some(t.metadata),
            created_at: Some(t.checkpoint.ts),
            parent_config: t.parent_config,
            interrupts: info.iter().flat_map(|t| t.interrupts.iter().cloned()).collect(),
            tasks: info,
            subgraphs: Vec::new(),
        })
    }

    /// Applies `values` to a thread as if node `as_node` had written them: reducers apply and
    /// `as_node`'s edges fire. Writes a checkpoint with `source = "update"` and returns its address.
    /// `as_node = None` means START for a new thread, otherwise the node that ran last.
    ///
    /// Scalar metadata of `config` ([`RunConfig::metadata`]) is stored in the checkpoint's
    /// metadata, as LangGraph merges it. Updating the latest state is checked like a run's
    /// commit: if another writer moved the thread meanwhile, nothing is stored and the error is a
    /// conflict ([`Error::is_conflict`]); updating an explicit `checkpoint_id` forks from it.
    ///
    /// # Errors
    /// No checkpointer or thread id, an unknown node, a rejected update, a conflict, or a
    /// checkpointer failure.
    pub async fn update_state(
        &self,
        config: &RunConfig,
        values: S::Update,
        as_node: Option<&str>,
    ) -> Result<CheckpointConfig> {
        let cfg = self.saver_config(config)?;
        let saver = self.checkpointer.as_deref().ok_or(Error::NoCheckpointer)?;
        let layout = &self.inner.layout;
        let loaded = saver.get_tuple(&cfg).await?;
        let mut vt = VersionText::default();
        let (mut ch, step, parent, saved_versions) = match &loaded {
            Some(t) => {
                let ch = persist::from_checkpoint(layout, &t.checkpoint, &mut vt)
                    .map_err(|e| persist::in_thread(e, &t.config.thread_id))?;
                let saved = ch.versions.clone();
                (ch, t.metadata.step, t.config.clone(), saved)
            }
            None => (crate::pregel::channels::Channels::new(layout), -1, cfg.clone(), Vec::new()),
        };
        let node = match as_node {
            Some(name) => layout.node(name).ok_or_else(|| Error::UnknownNode(name.to_owned()))?,
            None if loaded.is_none() => layout.node(START).unwrap_or(0),
            None => last_ran(&ch.versions_seen).unwrap_or(0),
        };
        let prefix = crate::pregel::task::IdPrefix::new(parent.checkpoint_id.as_deref().unwrap_or_default());
        let mut t = Task::pull(&layout.nodes[node], node, &prefix, &cfg.checkpoint_ns, step + 1);
        t.writes = Some(task::route(layout, node, &ch.state, NodeOutput::update(values))?);
        let updated = ch.apply_writes(layout, &mut [t], None)?;
        let step = step + 1;
        let cp = persist::to_checkpoint(
            layout,
            &ch,
            uuid6(step),
            &updated,
            &mut vt,
            &mut CheckpointCache::default(),
        )?;
        let mut new_versions = ChannelVersions::new();
        for (i, v) in ch.versions.iter().enumerate() {
            if *v > saved_versions.get(i).copied().unwrap_or(0) {
                let name = &layout.channels[i].name;
                let text = std::sync::Arc::clone(&cp.channel_versions[&**name]);
                new_versions.insert(std::sync::Arc::clone(name), text);
            }
        }
        let mut meta = CheckpointMetadata::new(CheckpointSource::Update, step);
        for (k, v) in &config.metadata {
            // As for runs: LangGraph keeps scalar user metadata and drops its own `__` keys.
            if !k.starts_with("__") && (v.is_string() || v.is_number() || v.is_boolean()) {
                meta.extra.insert(k.clone(), v.clone());
            }
        }
        // An update of the latest state must not fork a thread a run is writing at the same time;
        // an update of an explicit older checkpoint is a fork by request (time travel).
        let saved = if cfg.checkpoint_id.is_none() {
            saver.put_expecting_latest(&parent, cp, meta, new_versions).await?
        } else {
            saver.put(&parent, cp, meta, new_versions).await?
        };
        Ok(saved)
    }
}

/// The node whose trigger versions are the newest: the one that ran last.
fn last_ran(versions_seen: &[Vec<u64>]) -> Option<usize> {
    versions_seen
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(n, seen)| seen.iter().max().filter(|v| **v > 0).map(|v| (*v, n)))
        .max()
        .map(|(_, n)| n)
}
