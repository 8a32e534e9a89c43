//! Reading and editing a thread's state: `get_state`, `get_state_history`, `update_state`.

use tracing::Instrument;

use super::compiled::CompiledGraph;
use crate::checkpoint::backend::uuid6;
use crate::checkpoint::{
    ChainLink, ChannelVersions, CheckpointConfig, CheckpointMetadata, CheckpointSource, CheckpointTuple,
    Commit, ExpectParent, ListOptions, NULL_TASK_ID,
};
use crate::command::NodeOutput;
use crate::config::RunConfig;
use crate::constants::START;
use crate::error::{Error, Result};
use crate::interrupt::Interrupt;
use crate::pregel::channels::writes;
use crate::pregel::checkpoint_codec::{self, CheckpointCache, VersionText};
use crate::pregel::saver_spans::{saver_span, SaverOp};
use crate::pregel::task::{self, Task};
use crate::State;

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
    /// The interrupts it is waiting on (in an older checkpoint: every interrupt it raised).
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
    /// The tasks of the step that follows the checkpoint, with the errors of those that failed;
    /// in the latest state this includes the tasks that already finished (they are not in
    /// `next`), as LangGraph shows them.
    pub tasks: Vec<SnapshotTask>,
    /// Every pending interrupt of those tasks.
    pub interrupts: Vec<Interrupt>,
    /// The states of subgraphs that are part-way through (stopped at an interrupt or a failure),
    /// filled by [`CompiledGraph::get_state_with_subgraphs`].
    pub subgraphs: Vec<StateSnapshot<S>>,
}

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    fn saver_config(&self, config: &RunConfig) -> Result<CheckpointConfig> {
        if self.pregel.checkpointer.is_none() {
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
        let saver = self.pregel.checkpointer.as_deref().ok_or(Error::NoCheckpointer)?;
        match saver.get_tuple(&cfg).instrument(saver_span(SaverOp::GetTuple, &cfg)).await? {
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

    fn fill_subgraphs<'a>(&'a self, snap: &'a mut StateSnapshot<S>) -> crate::BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let (Some(cfg), Some(saver)) = (snap.config.clone(), self.pregel.checkpointer.as_deref()) else {
                return Ok(());
            };
            let layout = &self.pregel.layout;
            for task in &snap.tasks {
                let Some(child) = layout
                    .node(&task.name)
                    .and_then(|n| layout.nodes[n].node.as_ref())
                    .and_then(|n| n.0.subgraph())
                    .and_then(|g| g.downcast_ref::<CompiledGraph<S, C>>())
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
        let saver = self.pregel.checkpointer.as_deref().ok_or(Error::NoCheckpointer)?;
        let tuples = saver.list(Some(&cfg), options).instrument(saver_span(SaverOp::List, &cfg)).await?;
        tuples.into_iter().map(|t| self.snapshot(t, false)).collect()
    }

    fn snapshot(&self, t: CheckpointTuple, apply_pending: bool) -> Result<StateSnapshot<S>> {
        let layout = &self.pregel.layout;
        let mut vt = VersionText::default();
        let mut ch = checkpoint_codec::from_checkpoint(layout, &t.checkpoint, &mut vt)
            .map_err(|e| checkpoint_codec::in_thread(e, &t.config.thread_id))?;
        let ns = &t.config.checkpoint_ns;
        let mut tasks = ch.prepare_tasks(layout, &t.checkpoint.id, ns, t.metadata.step + 1)?;
        // As LangGraph reads a step's writes: a task finished when it recorded output (anything
        // but its interrupt, error and answers). The latest state applies finished tasks' output
        // and lists only the others as next, with the interrupts still waiting; an older
        // checkpoint is shown as stored, every task with every interrupt it raised.
        let mut info = Vec::new();
        let mut next = Vec::new();
        let mut done: Vec<Task<S>> = Vec::new();
        for mut task in tasks.drain(..) {
            let writes: Vec<_> = t.pending_writes.iter().filter(|w| *w.task_id == *task.id).collect();
            let error = writes
                .iter()
                .find(|w| w.channel == "__error__")
                .map(|w| w.value.decode::<String>().unwrap_or_else(|_| "error".to_owned()));
            let output: Vec<_> = writes
                .iter()
                .copied()
                .filter(|w| !mnemograph_checkpoint::__private::is_control_write(&w.channel))
                .collect();
            let finished = apply_pending && !output.is_empty();
            let mut interrupts: Vec<Interrupt> = Vec::new();
            if !finished {
                for w in writes.iter().filter(|w| w.channel == "__interrupt__") {
                    interrupts.extend(w.value.decode::<Vec<Interrupt>>()?);
                }
            }
            let name = layout.nodes[task.node].name.to_string();
            info.push(SnapshotTask { id: task.id.to_string(), name: name.clone(), error, interrupts });
            if finished {
                task.writes = Some(writes::pending_to_writes(layout, &output)?);
                done.push(task);
            } else {
                next.push(name);
            }
        }
        // The null task's writes (a command given as input) show in the values of any
        // checkpoint, but its next tasks were planned without them, as LangGraph plans them.
        let null: Vec<_> = t
            .pending_writes
            .iter()
            .filter(|w| {
                w.task_id == NULL_TASK_ID && !mnemograph_checkpoint::__private::is_control_write(&w.channel)
            })
            .collect();
        if !null.is_empty() {
            ch.apply_null_writes(layout, writes::pending_to_writes(layout, &null)?)?;
        }
        if !done.is_empty() {
            ch.apply_writes(layout, &mut done, None)?;
        }
        Ok(StateSnapshot {
            values: ch.state,
            next,
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
        let saver = self.pregel.checkpointer.as_deref().ok_or(Error::NoCheckpointer)?;
        let layout = &self.pregel.layout;
        let loaded = saver.get_tuple(&cfg).await?;
        let mut vt = VersionText::default();
        let (mut ch, step, parent, saved_versions) = match &loaded {
            Some(t) => {
                let ch = checkpoint_codec::from_checkpoint(layout, &t.checkpoint, &mut vt)
                    .map_err(|e| checkpoint_codec::in_thread(e, &t.config.thread_id))?;
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
        let writes = task::route(layout, node, &ch.state, NodeOutput::update(values))?;
        // LangGraph files the update's writes under a task of the checkpoint it builds on: the
        // task prepared for `as_node` there, if any, else one named after the update.
        let mut pairs = writes::writes_to_pending(layout, &writes)?;
        let pushes: Vec<_> = {
            let tasks_channel = &*layout.channels[layout.tasks_channel].name;
            let (pushes, rest) = pairs.into_iter().partition(|(c, _)| c.as_str() == tasks_channel);
            pairs = rest;
            pushes
        };
        let update_task = match &loaded {
            Some(l) => {
                let prepared = ch.prepare_tasks(layout, &l.checkpoint.id, &cfg.checkpoint_ns, step + 1)?;
                prepared
                    .iter()
                    .find(|p| p.node == node)
                    .map(|p| p.id.to_string())
                    .or_else(|| update_task_id(&l.checkpoint.id))
            }
            None => None,
        };
        t.writes = Some(writes);
        let updated = ch.apply_writes(layout, &mut [t], None)?;
        // Not when an older checkpoint was updated and the thread has moved past it: its other
        // children would read these writes too.
        let superseded = match (&loaded, &cfg.checkpoint_id) {
            (Some(l), Some(_)) => {
                let latest =
                    saver.get_tuple(&CheckpointConfig { checkpoint_id: None, ..cfg.clone() }).await?;
                latest.is_some_and(|latest| latest.checkpoint.id != l.checkpoint.id)
            }
            _ => false,
        };
        if let Some(task_id) = update_task.as_deref().filter(|_| !pairs.is_empty() && !superseded) {
            saver.put_writes(&parent, pairs, task_id, UPDATE_TASK_PATH).await?;
        }
        let step = step + 1;
        let mut cp = checkpoint_codec::to_checkpoint(
            layout,
            &ch,
            uuid6(step),
            &updated,
            &mut vt,
            &mut CheckpointCache::default(),
        )?;
        // LangGraph's `update_state` checkpoints name no updated channels.
        cp.updated_channels = None;
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
        let expect = if cfg.checkpoint_id.is_none() { ExpectParent::Latest } else { ExpectParent::Any };
        let link = ChainLink::new(cp, meta, new_versions);
        let span = saver_span(SaverOp::Commit, &parent);
        let saved = saver.commit(Commit::new(parent, vec![link], expect)).instrument(span).await?;
        // Pushes are the new checkpoint's to run, so they are its pending writes.
        if let Some(task_id) = update_task.as_deref().filter(|_| !pushes.is_empty()) {
            saver.put_writes(&saved, pushes, task_id, "").await?;
        }
        Ok(saved)
    }
}

/// The task path LangGraph gives an update's writes (`(INTERRUPT, 0)`).
const UPDATE_TASK_PATH: &str = "~__interrupt__, 0000000000";

/// LangGraph's id for the task of an update that has no prepared task to reuse: the UUID v5 of
/// `"__interrupt__"` in the namespace of the checkpoint's id.
fn update_task_id(checkpoint_id: &str) -> Option<String> {
    let namespace = uuid::Uuid::parse_str(checkpoint_id).ok()?;
    Some(uuid::Uuid::new_v5(&namespace, b"__interrupt__").to_string())
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
