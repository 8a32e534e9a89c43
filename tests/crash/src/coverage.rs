//! Where kills landed: each kill is put in one [`Bucket`] from what the saver held right after it
//! ([`Observation`]) and what the killed worker had finished (its [`journal`](crate::journal)
//! records), and a crash run fails when one of its mode's buckets got no kill
//! ([`Mode::buckets`]), so a harness whose kills miss a part of the run cannot pass.

use crate::checks::Observation;
use crate::journal::Record;
use crate::mode::Mode;

/// Where a kill landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bucket {
    /// Nothing stored, and the killed worker had finished no node: start-up, or the first save.
    BeforeInput,
    /// A checkpoint stored, and no task of the step after it finished yet (the kill landed
    /// inside the step's first node bodies, or between steps).
    BetweenSteps,
    /// Some tasks of the step after the newest stored checkpoint finished (in the killed
    /// worker, or with writes stored by an earlier one), not all.
    MidStep,
    /// Every task of the step after the newest stored checkpoint finished, and the step's
    /// checkpoint is not stored: the kill landed while the step's last writes and its checkpoint
    /// were being saved.
    StepDone,
    /// The killed worker had finished a task of a step whose input checkpoint is not stored
    /// (`async`: that checkpoint's save was in flight; `exit`: a run killed before its end).
    LostCheckpoint,
    /// The run's final checkpoint was stored (no task left after it).
    AfterEnd,
}

impl Bucket {
    /// Every bucket, in the order of a run.
    pub const ALL: [Self; 6] = [
        Self::BeforeInput,
        Self::BetweenSteps,
        Self::MidStep,
        Self::StepDone,
        Self::LostCheckpoint,
        Self::AfterEnd,
    ];

    /// A short name, as reports and failures print it.
    pub fn name(self) -> &'static str {
        match self {
            Self::BeforeInput => "before-input",
            Self::BetweenSteps => "between-steps",
            Self::MidStep => "mid-step",
            Self::StepDone => "step-done",
            Self::LostCheckpoint => "lost-checkpoint",
            Self::AfterEnd => "after-end",
        }
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|b| *b == self).unwrap_or_default()
    }

    /// The bucket of a kill after which the saver held `seen`, and the killed worker had
    /// finished the executions `own`.
    pub fn of(seen: &Observation, own: &[&Record]) -> Self {
        let Some((_, latest)) = &seen.latest else {
            return if own.is_empty() { Self::BeforeInput } else { Self::LostCheckpoint };
        };
        if seen.tasks.is_empty() {
            return Self::AfterEnd;
        }
        if own.iter().any(|r| r.step > latest + 1) {
            return Self::LostCheckpoint;
        }
        let finished = |task: &&String| seen.saved.contains(*task) || own.iter().any(|r| r.task_id == **task);
        match seen.tasks.iter().filter(finished).count() {
            0 => Self::BetweenSteps,
            n if n < seen.tasks.len() => Self::MidStep,
            _ => Self::StepDone,
        }
    }
}

/// Kills per bucket, and the executions the kills left unsaved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Kills observed.
    pub kills: usize,
    /// Kills per bucket, in the order of [`Bucket::ALL`].
    per_bucket: [usize; Bucket::ALL.len()],
    /// Executions that ended (journal record written) but whose writes were not stored when the
    /// process died: the engine may run these tasks again, and the checks allow it.
    pub executed_unsaved: usize,
}

impl Coverage {
    /// Counts one kill in `bucket`.
    pub fn add(&mut self, bucket: Bucket) {
        self.kills += 1;
        self.per_bucket[bucket.index()] += 1;
    }

    /// Kills in `bucket`.
    pub fn count(&self, bucket: Bucket) -> usize {
        self.per_bucket[bucket.index()]
    }

    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &Self) {
        self.kills += other.kills;
        for (mine, theirs) in self.per_bucket.iter_mut().zip(other.per_bucket) {
            *mine += theirs;
        }
        self.executed_unsaved += other.executed_unsaved;
    }

    /// The buckets `mode` requires that no kill landed in.
    pub fn missing(&self, mode: Mode) -> Vec<Bucket> {
        mode.buckets().iter().copied().filter(|b| self.count(*b) == 0).collect()
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} kills (", self.kills)?;
        for (i, bucket) in Bucket::ALL.into_iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{} {}", bucket.name(), self.count(bucket))?;
        }
        write!(f, "); {} executions ended but were unsaved at the kill (may re-run)", self.executed_unsaved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(step: i64, task: &str) -> Record {
        Record { incarnation: 0, step, task_id: task.to_owned(), node: "a".to_owned() }
    }

    fn seen(latest: Option<i64>, tasks: &[&str], saved: &[&str]) -> Observation {
        let set = |ids: &[&str]| ids.iter().map(|s| (*s).to_owned()).collect();
        Observation {
            incarnation: 0,
            latest: latest.map(|step| ("id".to_owned(), step)),
            saved: set(saved),
            tasks: set(tasks),
        }
    }

    #[test]
    fn kills_are_bucketed_by_what_was_stored_and_finished() {
        let (x, y) = (record(3, "x"), record(3, "y"));
        assert_eq!(Bucket::of(&seen(None, &[], &[]), &[]), Bucket::BeforeInput);
        assert_eq!(Bucket::of(&seen(None, &[], &[]), &[&x]), Bucket::LostCheckpoint);
        assert_eq!(Bucket::of(&seen(Some(2), &["x", "y"], &[]), &[]), Bucket::BetweenSteps);
        assert_eq!(Bucket::of(&seen(Some(2), &["x", "y"], &[]), &[&x]), Bucket::MidStep);
        assert_eq!(Bucket::of(&seen(Some(2), &["x", "y"], &["x"]), &[]), Bucket::MidStep);
        assert_eq!(Bucket::of(&seen(Some(2), &["x", "y"], &["x"]), &[&y]), Bucket::StepDone);
        assert_eq!(Bucket::of(&seen(Some(1), &["p"], &[]), &[&x]), Bucket::LostCheckpoint);
        assert_eq!(Bucket::of(&seen(Some(12), &[], &[]), &[&x]), Bucket::AfterEnd);
    }

    #[test]
    fn a_bucket_without_kills_is_missing_for_the_modes_that_require_it() {
        let mut coverage = Coverage::default();
        for bucket in [Bucket::BeforeInput, Bucket::LostCheckpoint, Bucket::AfterEnd] {
            coverage.add(bucket);
        }
        assert!(coverage.missing(Mode::Exit).is_empty());
        assert_eq!(coverage.missing(Mode::Sync), [Bucket::BetweenSteps, Bucket::MidStep, Bucket::StepDone]);
        let mut other = Coverage::default();
        other.add(Bucket::StepDone);
        coverage.merge(&other);
        assert_eq!(coverage.kills, 4);
        assert_eq!(coverage.missing(Mode::Async), [Bucket::BetweenSteps, Bucket::MidStep]);
    }
}
