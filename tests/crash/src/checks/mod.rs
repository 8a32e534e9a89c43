//! What a thread must satisfy after any number of kills and resumes: the promises of its
//! durability mode, as [`mode`](crate::mode) states them, each one a check here that reports a
//! [`Violation`].
//!
//! The checks read three things: the thread's final history, what the saver held right after
//! each kill ([`Observation`]), and the side [`journal`](crate::journal) of node executions. The
//! journal is what tells "the task ran" from "the saver knows the task ran": a task that finished
//! but whose writes were not stored may run again. The checks forbid re-running a task whose
//! writes were stored and bound how much unstored work a kill may lose; the re-runs the mode
//! allows are counted ([`Coverage::executed_unsaved`](crate::coverage::Coverage)).

mod chain;
mod executions;
mod observations;

use std::collections::BTreeSet;

use mnemograph_core::StateSnapshot;

use crate::coverage::Coverage;
use crate::journal::Record;
use crate::mode::Mode;
use crate::reference::Reference;
use crate::workload::Work;

pub use chain::{check_exit_history, check_history};
pub use executions::check_executions;

/// What the saver held for a thread right after one of its workers was killed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The worker that was killed.
    pub incarnation: u32,
    /// The latest checkpoint's id and step; `None` when nothing of the thread is stored.
    pub latest: Option<(String, i64)>,
    /// Tasks with (regular) writes stored against the latest checkpoint.
    pub saved: BTreeSet<String>,
    /// The tasks of the step after the latest checkpoint (none after the run's last step).
    pub tasks: BTreeSet<String>,
}

impl Observation {
    /// The newest stored step, `-1` when nothing is stored: a thread's first save stores the
    /// input checkpoint (step -1) together with step 0, so a task of step 1 starts from the
    /// first stored checkpoint, as one of step `L + 1` does from step `L`'s.
    pub fn latest_step(&self) -> i64 {
        self.latest.as_ref().map_or(-1, |(_, step)| *step)
    }
}

/// A promise of the thread's mode that does not hold.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Violation {
    /// The history's length differs from the reference run's (`exit`: from one).
    HistoryLength {
        /// Checkpoints expected.
        expected: usize,
        /// Checkpoints of the thread.
        actual: usize,
    },
    /// A checkpoint's parent, step, source or id order does not continue the chain.
    BrokenChain {
        /// Position, oldest first.
        index: usize,
        /// What is wrong.
        problem: &'static str,
        /// The checkpoint.
        checkpoint_id: Option<String>,
    },
    /// The saver's latest checkpoint is not the newest one listed.
    LatestIsNotNewest {
        /// From `get_tuple` without an id.
        latest: Option<String>,
        /// From `list`.
        newest: Option<String>,
    },
    /// The state at a step differs from the reference run's.
    StateDiffers {
        /// The step.
        step: i64,
        /// The reference state.
        expected: Box<Work>,
        /// The thread's state.
        actual: Box<Work>,
    },
    /// The nodes due after a step differ from the reference run's.
    NextDiffers {
        /// The step.
        step: i64,
        /// The reference run's.
        expected: Vec<String>,
        /// The thread's.
        actual: Vec<String>,
    },
    /// An execution in the journal is not a task of the final chain, and the mode does not
    /// allow it to be lost work.
    OrphanExecution(Record),
    /// A task of the chain has no execution in the journal.
    NeverExecuted {
        /// The step.
        step: i64,
        /// The task.
        task_id: String,
        /// Its node.
        node: String,
    },
    /// One process executed a task more than once.
    RanTwiceInOneProcess(Record),
    /// A process executed a task whose writes the saver already held when an earlier process was
    /// killed, or a task of a step at or before the latest checkpoint then stored.
    RerunAfterSaved {
        /// The offending execution.
        record: Record,
        /// The process after whose kill the task was already finished.
        finished_by: u32,
    },
    /// A killed worker had finished a task of a step further past the newest stored checkpoint
    /// than the mode allows: more than the mode may lose was lost.
    ProgressLost {
        /// The killed worker.
        incarnation: u32,
        /// The newest stored step at the kill (-1: none).
        latest_step: i64,
        /// The step of the worker's newest finished task.
        step: i64,
    },
    /// `exit`: after a kill the thread held something other than nothing or the run's final
    /// checkpoint.
    PartialRun {
        /// The killed worker.
        after_kill_of: u32,
        /// The step of the checkpoint it held.
        step: i64,
        /// How many tasks had writes stored against it.
        saved: usize,
    },
    /// `exit`: the worker whose run stored the final checkpoint did not execute exactly the
    /// reference run's executions.
    RunDiffers {
        /// That worker.
        incarnation: u32,
        /// The reference run's `(step, node)`, sorted.
        expected: Vec<(i64, String)>,
        /// The worker's, sorted.
        actual: Vec<(i64, String)>,
    },
    /// A checkpoint once seen as the latest is not in the final history.
    CheckpointLost {
        /// The process after whose kill it was seen.
        after_kill_of: u32,
        /// The checkpoint.
        checkpoint_id: String,
    },
    /// The latest checkpoint went back to an older step between two kills.
    WentBackwards {
        /// The process after whose kill the older step was seen.
        after_kill_of: u32,
        /// The step seen before.
        from: i64,
        /// The step seen then.
        to: i64,
    },
    /// Saved writes against a checkpoint disappeared while it was still the latest.
    PendingWritesLost {
        /// The process after whose kill they were missing.
        after_kill_of: u32,
        /// The task whose writes vanished.
        task_id: String,
    },
}

/// Every check of `mode` on one thread: its final `history` (newest first, as
/// `get_state_history` returns it) and the saver's `latest` checkpoint id, against the
/// uninterrupted `reference` run; the journal's `records`; the `observations` made after each
/// kill. Returns the violations and where the kills landed.
pub fn check_thread(
    mode: Mode,
    history: &[StateSnapshot<Work>],
    latest: Option<&str>,
    reference: &Reference,
    records: &[Record],
    observations: &[Observation],
) -> (Vec<Violation>, Coverage) {
    let mut found = match mode {
        Mode::Exit => check_exit_history(history, latest, &reference.history),
        Mode::Sync | Mode::Async => check_history(history, latest, &reference.history),
    };
    let (violations, coverage) = check_executions(mode, history, records, observations, reference);
    found.extend(violations);
    found.extend(observations::check(mode, history, observations));
    (found, coverage)
}
