//! LangGraph's `apply_writes`: the second pure half of a superstep.

use crate::error::{Error, Result};
use crate::pregel::channels::Channels;
use crate::pregel::plan::Layout;
use crate::pregel::task::{Task, TaskKind, TaskWrites};
use crate::state::{FieldSet, StateWrite};
use crate::State;

impl<S: State> Channels<S> {
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
                self.consume(&layout.channels[*ch].kind, *ch, next);
            }
        }
        // The pushes were turned into this step's tasks; a new step's pushes replace them.
        let had_pushes = self.take_pushes();

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
            self.write_links(channels, joins, &mut updated);
            if !pushes.is_empty() {
                updated[layout.tasks_channel] = true;
                self.write_pushes(pushes);
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
        self.end_step(layout, input, had_pushes, &mut updated, next);
        let mut out = self.stamp_updated(layout, &updated, next);
        // Nothing left that can trigger a node: the graph would finish, so deferred nodes may run.
        if !out.iter().any(|ch| layout.is_trigger[*ch]) {
            self.release_deferred(layout, next, &mut out);
        }
        out.sort_by(|a, b| layout.channels[*a].name.cmp(&layout.channels[*b].name));
        Ok(out)
    }
}

impl<S: State> Channels<S> {
    /// LangGraph's `apply_writes` for the null task alone (a command given as input): the written
    /// channels get one new version, and nothing is consumed, cleared or finished, because no
    /// superstep ends (the null task has no triggers). A push replaces the pushes waiting, as a
    /// write to LangGraph's `Topic` does. Returns the updated channels that are available,
    /// sorted by name.
    ///
    /// # Errors
    /// [`Error::InvalidUpdate`] when the updates break a channel rule.
    pub(crate) fn apply_null_writes<C>(
        &mut self,
        layout: &Layout<S, C>,
        writes: TaskWrites<S>,
    ) -> Result<Vec<usize>> {
        let TaskWrites { state, channels, joins, pushes } = writes;
        let next = self.max_version() + 1;
        let mut updated = vec![false; layout.channels.len()];
        self.write_links(channels, joins, &mut updated);
        if !pushes.is_empty() {
            self.pushes.clear();
            self.write_pushes(pushes);
            updated[layout.tasks_channel] = true;
        }
        if !state.is_empty() {
            let written = self
                .state
                .apply(state)
                .map_err(|source| Error::InvalidUpdate { nodes: "the command".to_owned(), source })?;
            for f in written.iter() {
                updated[f] = true;
            }
        }
        let mut out = self.stamp_updated(layout, &updated, next);
        out.sort_by(|a, b| layout.channels[*a].name.cmp(&layout.channels[*b].name));
        Ok(out)
    }

    /// Writes a task's edge and join channels, marking them updated.
    fn write_links(&mut self, channels: Vec<usize>, joins: Vec<(usize, u64)>, updated: &mut [bool]) {
        for ch in channels {
            self.write_edge(ch);
            updated[ch] = true;
        }
        for (ch, bit) in joins {
            self.write_join(ch, bit);
            updated[ch] = true;
        }
    }

    /// Gives every updated channel version `next` and returns those that are available, in
    /// channel order. Unavailable channels (a join still waiting, a deferred edge before the
    /// finish) cannot trigger anything, so they do not count as updated (as in LangGraph).
    fn stamp_updated<C>(&mut self, layout: &Layout<S, C>, updated: &[bool], next: u64) -> Vec<usize> {
        let mut out = Vec::new();
        for (ch, u) in updated.iter().enumerate() {
            if *u {
                self.versions[ch] = next;
                if self.is_available(layout, ch) {
                    out.push(ch);
                }
            }
        }
        out
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
