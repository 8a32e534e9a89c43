//! Starting a run from the checkpoint its saver remembers, instead of reading it back.
//!
//! A chat turn starts by reading the thread's latest checkpoint, which is usually the one this
//! process stored at the end of the previous turn: a round trip (and, for a SQL saver, two
//! queries) to learn what the saver already holds in memory. A run with new input may start
//! from [`remembered_latest`](crate::checkpoint::Checkpointer::remembered_latest) instead,
//! because its first commit (the input checkpoint and the step that routes it, one
//! `put_chain` expecting that checkpoint to be the latest) checks exactly what the read would
//! have: when another writer moved the thread on, or the row changed, the saver refuses, and the
//! run is made again from a real read.
//!
//! That is only invisible when nothing of the first attempt can be seen or has run: the input is
//! new (its pending writes would be discarded anyway), durability is `Sync` (the first commit
//! comes before any node runs), START has no conditional edge (no router of the user's runs
//! before it), and nothing is streamed. Any failure before the first commit, not only a
//! conflict, sends the run to a real read: a failure on a state that was not the latest says
//! nothing about the latest.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{run_loaded, Sink};
use crate::checkpoint::CheckpointTuple;
use crate::command::Input;
use crate::config::{Durability, RunConfig};
use crate::error::Result;
use crate::interrupt::RunOutcome;
use crate::pregel::runnable::Pregel;
use crate::state::State;

/// Whether the run's first commit has succeeded: shared with its persistence, so that it can be
/// told after the run failed.
#[derive(Clone, Default)]
pub(crate) struct Committed(Arc<AtomicBool>);

impl Committed {
    /// Records a successful commit.
    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether a commit succeeded.
    fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// The remembered checkpoint to start `input` from, and a copy of the input for a second
/// attempt; `None` when the run must read its checkpoint (see the module documentation).
fn start<S: State, C>(
    graph: &Pregel<S, C>,
    input: &Input<S>,
    config: &RunConfig,
    sink: Option<&Sink<S>>,
) -> Option<(CheckpointTuple, Input<S>)> {
    let Input::Update(update) = input else { return None };
    let saver = graph.checkpointer.as_ref()?;
    let plain_start = graph.layout.nodes.first().is_some_and(|start| start.branches.is_empty());
    if sink.is_some()
        || config.durability != Durability::Sync
        || config.checkpoint_id.is_some()
        || !plain_start
    {
        return None;
    }
    let tuple = saver.remembered_latest(&config.checkpoint_config()?)?;
    Some((tuple, Input::Update(update.clone())))
}

/// Runs `input` from the remembered checkpoint when that is allowed, and again from a real read
/// when the first attempt failed before its first commit; otherwise from a real read at once.
pub(super) async fn run<S: State, C: Send + Sync + 'static>(
    graph: &Pregel<S, C>,
    input: Input<S>,
    config: &RunConfig,
    sink: Option<&Sink<S>>,
    started_at: &mut Option<String>,
) -> Result<RunOutcome<S>> {
    let Some((remembered, again)) = start(graph, &input, config, sink) else {
        return run_loaded(graph, input, config, sink, started_at, None, None).await;
    };
    let committed = Committed::default();
    let first =
        run_loaded(graph, input, config, sink, started_at, Some(remembered), Some(committed.clone())).await;
    match first {
        Err(e) if !committed.get() => {
            tracing::debug!(error = %e, "the remembered checkpoint was not the thread's latest; reading it");
            run_loaded(graph, again, config, sink, started_at, None, None).await
        }
        other => other,
    }
}
