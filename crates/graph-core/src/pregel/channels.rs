//! The channel table of a run, and the two pure halves of a superstep.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::plan::{ChannelKind, Layout};
use super::task::{IdPrefix, Task, TaskKind, TaskWrites};
use crate::command::Push;
use crate::error::{Error, Result};
use crate::state::{FieldSet, State, StateWrite};
use crate::value::ChannelValue;

/// Every channel's value and version. Versions are integers here (LangGraph's string versions
/// compare by their zero-padded integer prefix, so integers order the same way); their string
/// form is rendered only when a checkpoint is written.
pub(crate) struct Channels<S: State> {
    pub(crate) state: S,
    /// The `__start__` channel: the run's input, available for one superstep.
    pub(crate) start: Option<Vec<S::Update>>,
    /// Ephemeral and deferred edge channels: whether they hold a value.
    pub(crate) present: Vec<bool>,
    /// Deferred edge channels: whether the graph reached its finish point since they were written.
    pub(crate) finished: Vec<bool>,
    /// Join channels: the sources seen so far, one bit each.
    pub(crate) seen: Vec<u64>,
    /// `__pregel_tasks`: pushes for the next superstep.
    pub(crate) pushes: Vec<Push<S>>,
    /// Version of each channel; 0 = never written.
    pub(crate) versions: Vec<u64>,
    /// For each node, the versions of its triggers it last ran on (aligned with its triggers).
    pub(crate) versions_seen: Vec<Vec<u64>>,
    /// For each node, whether it ever ran: LangGraph keeps a `versions_seen` entry for such a
    /// node even when it has no trigger versions (a node only ever pushed to).
    pub(crate) ran: Vec<bool>,
    /// Channel versions when the run last resumed (LangGraph's `versions_seen["__interrupt__"]`):
    /// a breakpoint fires only if something changed since.
    pub(crate) interrupt_seen: Vec<u64>,
    /// Channels this graph does not know (written by another graph or version of it): kept and
    /// written back verbatim, so nothing stored is silently dropped.
    pub(crate) foreign: BTreeMap<Arc<str>, (Arc<str>, Option<ChannelValue>)>,
    /// `versions_seen` entries of nodes this graph does not have (`__input__`, `__interrupt__`, ...).
    pub(crate) foreign_seen: BTreeMap<Arc<str>, crate::checkpoint::ChannelVersions>,
}

impl<S: State> Channels<S> {
    pub(crate) fn new<C>(layout: &Layout<S, C>) -> Self {
        let n = layout.channels.len();
        Self {
            state: S::default(),
            start: None,
            present: vec![false; n],
            finished: vec![false; n],
            seen: vec![0; n],
            pushes: Vec::new(),
            versions: vec![0; n],
            interrupt_seen: vec![0; n],
            versions_seen: layout.nodes.iter().map(|d| vec![0; d.triggers.len()]).collect(),
            ran: vec![false; layout.nodes.len()],
            foreign: BTreeMap::new(),
            foreign_seen: BTreeMap::new(),
        }
    }

    /// The fields LangGraph would read from these channels: every reducer field (it starts from
    /// an empty value) and every plain field written so far.
    pub(crate) fn available_fields<C>(&self, layout: &Layout<S, C>) -> crate::state::FieldSet {
        let mut set = crate::state::FieldSet::EMPTY;
        for (ch, spec) in layout.channels.iter().enumerate() {
            if let ChannelKind::Field(f) = spec.kind {
                if S::FIELDS[f].kind == crate::state::FieldKind::Reducer || self.versions[ch] > 0 {
                    set.insert(f);
                }
            }
        }
        set
    }

    /// Whether channel `ch` currently holds something a node can be triggered by.
    pub(crate) fn is_available<C>(&self, layout: &Layout<S, C>, ch: usize) -> bool {
        match &layout.channels[ch].kind {
            ChannelKind::Field(_) => self.versions[ch] > 0,
            ChannelKind::Start => self.start.is_some(),
            ChannelKind::Branch => self.present[ch],
            ChannelKind::Deferred => self.present[ch] && self.finished[ch],
            ChannelKind::Join { sources } => self.seen[ch] == full_mask(sources.len()),
            ChannelKind::Tasks => !self.pushes.is_empty(),
        }
    }

    fn max_version(&self) -> u64 {
        self.versions.iter().copied().max().unwrap_or(0)
    }

    /// LangGraph's `should_interrupt`: the tasks whose node is a breakpoint, if any channel changed
    /// since the run last resumed.
    pub(crate) fn breakpoint_hits<C>(
        &self,
        layout: &Layout<S, C>,
        nodes: &[usize],
        tasks: &[Task<S>],
    ) -> Vec<String> {
        let changed = self.versions.iter().zip(&self.interrupt_seen).any(|(v, seen)| v > seen);
        if !changed {
            return Vec::new();
        }
        let mut hits: Vec<String> = tasks
            .iter()
            .filter(|t| nodes.contains(&t.node))
            .map(|t| layout.nodes[t.node].name.to_string())
            .collect();
        hits.dedup();
        hits
    }

    /// The nodes that would run next, without building tasks (for `get_state().next`).
    pub(crate) fn triggered_nodes<C>(&self, layout: &Layout<S, C>) -> Vec<usize> {
        (0..layout.nodes.len()).filter(|n| self.is_triggered(layout, *n)).collect()
    }

    fn is_triggered<C>(&self, layout: &Layout<S, C>, node: usize) -> bool {
        let def = &layout.nodes[node];
        def.triggers
            .iter()
            .zip(&self.versions_seen[node])
            .any(|(ch, seen)| self.is_available(layout, *ch) && self.versions[*ch] > *seen)
    }

    /// LangGraph's `prepare_next_tasks`: pull tasks for triggered nodes (in node order), then a push
    /// task per pending [`Push`].
    ///
    /// # Errors
    /// [`Error::UnknownNode`] when a push names a node the graph does not have.
    pub(crate) fn prepare_tasks<C>(
        &self,
        layout: &Layout<S, C>,
        checkpoint_id: &str,
        checkpoint_ns: &str,
        step: i64,
    ) -> Result<Vec<Task<S>>> {
        let mut tasks = Vec::new();
        self.prepare_tasks_into(&mut tasks, layout, checkpoint_id, checkpoint_ns, step)?;
        Ok(tasks)
    }

    /// [`prepare_tasks`](Self::prepare_tasks) into `tasks` (empty; its capacity is reused).
    pub(crate) fn prepare_tasks_into<C>(
        &self,
        tasks: &mut Vec<Task<S>>,
        layout: &Layout<S, C>,
        checkpoint_id: &str,
        checkpoint_ns: &str,
        step: i64,
    ) -> Result<()> {
        debug_assert!(tasks.is_empty());
        let prefix = IdPrefix::new(checkpoint_id);
        for (node, def) in layout.nodes.iter().enumerate() {
            if self.is_triggered(layout, node) {
                tasks.push(Task::pull(def, node, &prefix, checkpoint_ns, step));
            }
        }
        for (i, push) in self.pushes.iter().enumerate() {
            let node = layout.node(&push.node).ok_or_else(|| Error::UnknownNode(push.node.clone()))?;
            let def = &layout.nodes[node];
            tasks.push(Task::push(def, (node, i), push.arg.clone(), &prefix, checkpoint_ns, step));
        }
        Ok(())
    }

    /// LangGraph's `apply_writes`: applies the finished tasks' writes in task-path order, gives
    /// every updated channel one new version, clears ephemeral channels nobody wrote, and finishes
    /// deferred channels when nothing else can trigger. Returns the updated channels, sorted.
    ///
    /// # Errors
    /// [`Error::InvalidUpdate`] naming the nodes whose writes broke a channel rule.
    pub(crate) fn apply_writes<C>(
        &mut self,
        layout: &Layout<S, C>,
        tasks: &mut [Task<S>],
        input: Option<Vec<S::Update>>,
    ) -> Result<Vec<usize>> {
        // Writes are applied in task-path order, never completion order, so a run's result does not
        // depend on which task happened to finish first.
        tasks.sort_by(|a, b| a.path.cmp(&b.path));
        for t in tasks.iter() {
            self.ran[t.node] = true;
            if t.kind == TaskKind::Pull {
                let def = &layout.nodes[t.node];
                for (k, ch) in def.triggers.iter().enumerate() {
                    self.versions_seen[t.node][k] = self.versions[*ch];
                }
            }
        }
        // One new version for the whole step.
        let next = self.max_version() + 1;
        let mut updated = vec![false; layout.channels.len()];
        // Consume the triggers of the tasks that ran: joins reset, deferred edges reset once used.
        for t in tasks.iter() {
            for ch in &layout.nodes[t.node].triggers {
                match layout.channels[*ch].kind {
                    ChannelKind::Join { .. } if self.seen[*ch] != 0 => {
                        self.seen[*ch] = 0;
                        self.versions[*ch] = next;
                    }
                    ChannelKind::Deferred if self.finished[*ch] => {
                        self.present[*ch] = false;
                        self.finished[*ch] = false;
                        self.versions[*ch] = next;
                    }
                    _ => {}
                }
            }
        }
        // The pushes were turned into this step's tasks; a new step's pushes replace them.
        let had_pushes = !std::mem::take(&mut self.pushes).is_empty();

        let mut state_writes: Vec<StateWrite<S::Update>> = Vec::new();
        // Which fields each task wrote, to name the culprits if the state rejects the step.
        let mut writers: Vec<(usize, FieldSet)> = Vec::new();
        for t in tasks.iter_mut() {
            let Some(TaskWrites { state, channels, joins, pushes }) = t.writes.take() else { continue };
            let fields = state.iter().fold(FieldSet::EMPTY, |a, w| a.union(S::written(&w.update)));
            writers.push((t.node, fields));
            // A step's only writer (every step of a chain) hands its list over whole.
            if state_writes.is_empty() {
                state_writes = state;
            } else {
                state_writes.extend(state);
            }
            for ch in channels {
                self.present[ch] = true;
                self.finished[ch] = false;
                updated[ch] = true;
            }
            for (ch, bit) in joins {
                self.seen[ch] |= bit;
                updated[ch] = true;
            }
            if !pushes.is_empty() {
                updated[layout.tasks_channel] = true;
                self.pushes.extend(pushes);
            }
        }
        if !state_writes.is_empty() {
            let written: FieldSet = self.state.apply(state_writes).map_err(|source| {
                Error::InvalidUpdate { nodes: writers_of(layout, &writers, &source), source }
            })?;
            for f in written.iter() {
                updated[f] = true;
            }
        }
        // Ephemeral channels that were not written this step are cleared (their version moves on).
        if self.start.take().is_some() && input.is_none() {
            self.versions[layout.start_channel] = next;
        }
        if let Some(input) = input {
            self.start = Some(input);
            updated[layout.start_channel] = true;
        }
        if had_pushes && !updated[layout.tasks_channel] {
            self.versions[layout.tasks_channel] = next;
        }
        for (ch, spec) in layout.channels.iter().enumerate() {
            if spec.kind == ChannelKind::Branch && self.present[ch] && !updated[ch] {
                self.present[ch] = false;
                self.versions[ch] = next;
            }
        }
        let mut out: Vec<usize> = Vec::new();
        for (ch, u) in updated.iter().enumerate() {
            if *u {
                self.versions[ch] = next;
                // Unavailable channels (a join still waiting, a deferred edge before the finish)
                // cannot trigger anything, so they do not count as updated (as in LangGraph).
                if self.is_available(layout, ch) {
                    out.push(ch);
                }
            }
        }
        // Nothing left that can trigger a node: the graph would finish, so deferred nodes may run.
        if !out.iter().any(|ch| layout.is_trigger[*ch]) {
            for (ch, spec) in layout.channels.iter().enumerate() {
                if spec.kind == ChannelKind::Deferred && self.present[ch] && !self.finished[ch] {
                    self.finished[ch] = true;
                    self.versions[ch] = next;
                    out.push(ch);
                }
            }
        }
        out.sort_by(|a, b| layout.channels[*a].name.cmp(&layout.channels[*b].name));
        Ok(out)
    }
}

const fn full_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// Names the nodes whose writes touched the field a rejected update was about.
fn writers_of<S: State, C>(
    layout: &Layout<S, C>,
    writers: &[(usize, FieldSet)],
    err: &crate::state::InvalidUpdate,
) -> String {
    use crate::state::InvalidUpdate as E;
    let field = match err {
        E::ConcurrentWrites { field } | E::ConcurrentOverwrites { field } | E::Reducer { field, .. } => {
            *field
        }
    };
    let Some(idx) = S::field_index(field) else { return "the input".to_owned() };
    let names: Vec<String> = writers
        .iter()
        .filter(|(_, fields)| fields.contains(idx))
        .map(|(node, _)| format!("{:?}", &*layout.nodes[*node].name))
        .collect();
    if names.is_empty() {
        "the input".to_owned()
    } else {
        names.join(" and ")
    }
}
