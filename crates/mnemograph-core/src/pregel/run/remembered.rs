//! Starting a run from the checkpoint its saver remembers, instead of reading it back.
//!
//! A chat turn starts by reading the thread's latest checkpoint, which is usually the one this
//! process stored at the end of the previous turn: a round trip (and, for a SQL saver, two
//! queries) to learn what the saver already holds in memory. A run with new input may start
//! from [`remembered_latest`](crate::checkpoint::Checkpointer::remembered_latest) instead,
//! because its first commit (the input checkpoint and the step that routes it, one
//! commit expecting that checkpoint to be the latest) checks exactly what the read would
//! have: when another writer moved the thread on, or the row changed, the saver refuses, and the
//! run is made again from a real read.
//!
//! That is only invisible when nothing of the first attempt can be seen or has run: the input is
//! new (its pending writes would be discarded anyway), durability is `Sync` (the first commit
//! comes before any node runs), START has no conditional edge (no router of the user's runs
//! before it), and nothing is streamed. Any failure before the first commit, not only a
//! conflict, sends the run to a real read: a failure on a state that was not the latest says
//! nothing about the latest.

use crate::checkpoint::CheckpointTuple;
use crate::command::Input;
use crate::config::{Durability, RunConfig};
use crate::pregel::Pregel;
use crate::State;

/// The remembered checkpoint to start `input` from, and a copy of the input for a second
/// attempt; `None` when the run must read its checkpoint (see the module documentation).
/// `streamed` tells whether the run's events are streamed.
pub(super) fn start<S: State, C>(
    graph: &Pregel<S, C>,
    input: &Input<S>,
    config: &RunConfig,
    streamed: bool,
) -> Option<(CheckpointTuple, Input<S>)> {
    let Input::Update(update) = input else { return None };
    let saver = graph.checkpointer.as_ref()?;
    let plain_start = graph.layout.nodes.first().is_some_and(|start| start.branches.is_empty());
    if streamed || config.durability != Durability::Sync || config.checkpoint_id.is_some() || !plain_start {
        return None;
    }
    let tuple = saver.remembered_latest(&config.checkpoint_config()?)?;
    Some((tuple, Input::Update(update.clone())))
}
