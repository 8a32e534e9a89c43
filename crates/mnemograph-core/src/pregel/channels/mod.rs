//! The channel table of a run.
//!
//! The table is struct-of-arrays (a version per channel, a flag per edge, a bit set per
//! barrier), so a step touches no map. What each kind of channel does (when it is available,
//! what a write, a consumption and the end of a step do to it, how it is stored in a checkpoint
//! and in a pending write) lives in that kind's file; this one holds the table and dispatches on
//! [`ChannelKind`]. The step algorithm that drives it is in [`step`](super::step).

mod branch;
mod deferred;
mod field;
mod join;
mod sends;
mod start;
pub(crate) mod writes;

use std::collections::BTreeMap;
use std::sync::Arc;

use super::plan::{ChannelKind, Layout};
use crate::checkpoint::serde::SerdeError;
use crate::checkpoint::CheckpointError;
use crate::command::Push;
use crate::error::{Error, Result};
use crate::value::{ChannelValue, ValueError};
use crate::State;

/// A value that cannot be written in LangGraph's form, as the engine's error.
fn ser(e: SerdeError) -> Error {
    Error::Checkpoint(e.into())
}

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
            ChannelKind::Field(_) => field::available(self, ch),
            ChannelKind::Start => start::available(self),
            ChannelKind::Branch => branch::available(self, ch),
            ChannelKind::Deferred => deferred::available(self, ch),
            ChannelKind::Join { sources } => join::available(self, ch, sources),
            ChannelKind::Tasks => sends::available(self),
        }
    }

    /// Channel `i`'s checkpoint value, `None` when it stores none. A field's value is the state's
    /// (the caller may have it cached).
    pub(crate) fn value(&self, kind: &ChannelKind, i: usize) -> Result<Option<ChannelValue>> {
        Ok(match kind {
            ChannelKind::Field(f) => Some(self.state.get_field(*f)),
            ChannelKind::Start => start::value(self)?,
            ChannelKind::Branch => branch::value(self, i),
            ChannelKind::Deferred => deferred::value(self, i),
            ChannelKind::Join { sources } => Some(join::value(self, i, sources)?),
            ChannelKind::Tasks => Some(sends::value(self)?),
        })
    }

    /// Restores channel `i` from its checkpoint value; `corrupt` names where a value that does
    /// not decode was stored.
    pub(crate) fn restore(
        &mut self,
        kind: &ChannelKind,
        i: usize,
        value: &ChannelValue,
        corrupt: impl Fn(ValueError) -> CheckpointError,
    ) -> Result<()> {
        match kind {
            ChannelKind::Field(f) => field::restore(self, *f, value).map_err(corrupt)?,
            ChannelKind::Start => start::restore(self, value)?,
            ChannelKind::Branch => branch::write(self, i),
            ChannelKind::Deferred => deferred::restore(self, i, value)?,
            ChannelKind::Join { sources } => join::restore(self, i, sources, value).map_err(corrupt)?,
            ChannelKind::Tasks => sends::restore(self, value)?,
        }
        Ok(())
    }

    /// The highest version of any channel: a step's writes all get the one after it.
    pub(crate) fn max_version(&self) -> u64 {
        self.versions.iter().copied().max().unwrap_or(0)
    }

    /// The node behind a trigger of a task that ran used it up: a barrier starts over, a
    /// released deferred edge clears.
    pub(crate) fn consume(&mut self, kind: &ChannelKind, i: usize, next: u64) {
        match kind {
            ChannelKind::Join { .. } => join::consume(self, i, next),
            ChannelKind::Deferred => deferred::consume(self, i, next),
            ChannelKind::Field(_) | ChannelKind::Start | ChannelKind::Branch | ChannelKind::Tasks => {}
        }
    }

    /// A task wrote edge (or deferred edge) `i`.
    pub(crate) fn write_edge(&mut self, i: usize) {
        branch::write(self, i);
    }

    /// Source `bit` of barrier `i` wrote.
    pub(crate) fn write_join(&mut self, i: usize, bit: u64) {
        join::write(self, i, bit);
    }

    /// Starts applying a step: the pending pushes became this step's tasks, so they leave the
    /// topic. Returns whether there were any.
    pub(crate) fn take_pushes(&mut self) -> bool {
        sends::take(self)
    }

    /// A task pushed `pushes` to the next step.
    pub(crate) fn write_pushes(&mut self, pushes: Vec<Push<S>>) {
        sends::write(self, pushes);
    }

    /// Ends a step's writes: the input is replaced or cleared, the pushes topic and the edges
    /// nobody wrote this step are cleared, their versions moving on to `next`. Marks the
    /// channels updated by the step in `updated`.
    pub(crate) fn end_step<C>(
        &mut self,
        layout: &Layout<S, C>,
        input: Option<Vec<S::Update>>,
        had_pushes: bool,
        updated: &mut [bool],
        next: u64,
    ) {
        if start::finish_step(self, layout.start_channel, input, next) {
            updated[layout.start_channel] = true;
        }
        sends::finish_step(self, layout.tasks_channel, had_pushes, updated[layout.tasks_channel], next);
        for (ch, spec) in layout.channels.iter().enumerate() {
            if spec.kind == ChannelKind::Branch {
                branch::finish_step(self, ch, updated[ch], next);
            }
        }
    }

    /// Nothing else can trigger a node, so the graph would finish: waiting deferred edges become
    /// available. Appends the channels released to `out`.
    pub(crate) fn release_deferred<C>(&mut self, layout: &Layout<S, C>, next: u64, out: &mut Vec<usize>) {
        for (ch, spec) in layout.channels.iter().enumerate() {
            if spec.kind == ChannelKind::Deferred && deferred::finish(self, ch, next) {
                out.push(ch);
            }
        }
    }
}
