//! The durability modes under test, and what each one promises a thread whose worker is killed.
//!
//! The promises follow from how the engine saves (`mnemograph-core`'s `pregel::commit` and
//! `pregel::run::save`), and each is stated as the checks of [`checks`](crate::checks) that
//! enforce it. `L` is the step of the newest checkpoint stored when a worker is killed, `-1` when
//! none is (the input checkpoint and step 0, which only routes the input, are always stored
//! together, so a thread with anything stored has step 0); "finished" means the node body
//! reached its end, as the [`journal`](crate::journal) records.
//!
//! * **`Sync`**: a step's checkpoint is stored before the next step starts; each task's writes
//!   are stored as it finishes, the last task's together with the step's checkpoint.
//!   - *No finished step is lost*: every task the killed worker finished is of a step `<= L + 1`
//!     ([`Violation::ProgressLost`]).
//!   - *No work for a lost checkpoint*: every execution in the journal is a task of the final
//!     chain ([`Violation::OrphanExecution`]).
//!   - *Only unsaved work re-runs*: no later worker executes a task of a step `<= L`, nor one
//!     whose writes were stored at the kill ([`Violation::RerunAfterSaved`]). With the first
//!     check, a resumed run re-executes only tasks of the step that was running (`L + 1`) whose
//!     writes were not stored; re-executing those is allowed, and counted.
//! * **`Async`**: a step's checkpoint is stored while the next step runs; a save waits for the
//!   previous one, so at most one is in flight. Task writes are stored as in `Sync`, against the
//!   checkpoint being saved.
//!   - *At most the save in flight is lost*: every task the killed worker finished is of a step
//!     `<= L + 2` ([`Violation::ProgressLost`]): the checkpoint its tasks started from may be
//!     missing (the save in flight, or the input checkpoint with step 0), never an older one.
//!   - *Work for the lost checkpoint only*: an execution that is not a task of the final chain
//!     was made by a killed worker at step `L + 2` ([`Violation::OrphanExecution`]).
//!   - *Only unsaved work re-runs*: as in `Sync`; a resumed run continues from the newest stored
//!     checkpoint, so it re-executes at most the unsaved tasks of steps `L + 1` and `L + 2`.
//! * **`Exit`**: nothing is stored until the run ends; then its one checkpoint, whose parent is
//!   the checkpoint the run started from.
//!   - *Never a partial run*: after each kill the thread holds nothing (as before the run) or the
//!     run's final checkpoint with no task left and no pending writes ([`Violation::PartialRun`]).
//!   - *One checkpoint, the right one*: the final history is a single parentless `loop`
//!     checkpoint at the reference run's last step, whose state and next nodes equal the
//!     reference run's ([`Violation::HistoryLength`], [`Violation::BrokenChain`],
//!     [`Violation::StateDiffers`], [`Violation::NextDiffers`]).
//!   - *A killed run starts over*: the worker whose run stored that checkpoint executed exactly
//!     the reference run's executions, each once ([`Violation::RunDiffers`]); no worker after it
//!     executes anything ([`Violation::RerunAfterSaved`]).
//!
//! In every mode: the final history (one chain, checked against an uninterrupted reference run)
//! holds every checkpoint ever seen as the latest ([`Violation::CheckpointLost`]); the latest never
//! goes back to an older step ([`Violation::WentBackwards`]); stored writes against a checkpoint
//! stay while it is the latest ([`Violation::PendingWritesLost`]); every task of the chain has an
//! execution in the journal ([`Violation::NeverExecuted`]); and no process executes a task twice
//! ([`Violation::RanTwiceInOneProcess`]).
//!
//! [`Violation::ProgressLost`]: crate::Violation::ProgressLost
//! [`Violation::OrphanExecution`]: crate::Violation::OrphanExecution
//! [`Violation::RerunAfterSaved`]: crate::Violation::RerunAfterSaved
//! [`Violation::PartialRun`]: crate::Violation::PartialRun
//! [`Violation::HistoryLength`]: crate::Violation::HistoryLength
//! [`Violation::BrokenChain`]: crate::Violation::BrokenChain
//! [`Violation::StateDiffers`]: crate::Violation::StateDiffers
//! [`Violation::NextDiffers`]: crate::Violation::NextDiffers
//! [`Violation::RunDiffers`]: crate::Violation::RunDiffers
//! [`Violation::CheckpointLost`]: crate::Violation::CheckpointLost
//! [`Violation::WentBackwards`]: crate::Violation::WentBackwards
//! [`Violation::PendingWritesLost`]: crate::Violation::PendingWritesLost
//! [`Violation::NeverExecuted`]: crate::Violation::NeverExecuted
//! [`Violation::RanTwiceInOneProcess`]: crate::Violation::RanTwiceInOneProcess

use mnemograph_core::Durability;

use crate::coverage::Bucket;

/// A durability mode the harness runs threads with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// [`Durability::Sync`].
    Sync,
    /// [`Durability::Async`].
    Async,
    /// [`Durability::Exit`].
    Exit,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Self; 3] = [Self::Sync, Self::Async, Self::Exit];

    /// The engine's setting.
    pub fn durability(self) -> Durability {
        match self {
            Self::Sync => Durability::Sync,
            Self::Async => Durability::Async,
            Self::Exit => Durability::Exit,
        }
    }

    /// `sync`, `async` or `exit`, as LangGraph spells them.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sync => "sync",
            Self::Async => "async",
            Self::Exit => "exit",
        }
    }

    /// The mode named `name` (see [`name`](Self::name)).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// How many steps past the newest stored checkpoint a killed worker may have finished tasks
    /// of; `None` when any number may be lost (`Exit`, where nothing is stored before the end).
    pub fn unsaved_steps(self) -> Option<i64> {
        match self {
            Self::Sync => Some(1),
            Self::Async => Some(2),
            Self::Exit => None,
        }
    }

    /// The buckets a crash run of this mode must put at least one kill in: every place a kill
    /// can leave a thread in this mode.
    pub fn buckets(self) -> &'static [Bucket] {
        match self {
            Self::Sync => &[
                Bucket::BeforeInput,
                Bucket::BetweenSteps,
                Bucket::MidStep,
                Bucket::StepDone,
                Bucket::AfterEnd,
            ],
            Self::Async => &[
                Bucket::BeforeInput,
                Bucket::BetweenSteps,
                Bucket::MidStep,
                Bucket::StepDone,
                Bucket::LostCheckpoint,
                Bucket::AfterEnd,
            ],
            Self::Exit => &[Bucket::BeforeInput, Bucket::LostCheckpoint, Bucket::AfterEnd],
        }
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for mode in Mode::ALL {
            assert_eq!(Mode::parse(mode.name()), Some(mode));
        }
        assert_eq!(Mode::parse("fast"), None);
    }
}
