//! What a thread must satisfy after any number of kills and resumes.
//!
//! The three properties of the issue, made precise:
//!
//! * **No committed write is lost.** Every checkpoint the harness ever saw as the latest is still
//!   in the final history; while the latest checkpoint stays the same, the set of tasks with saved
//!   writes against it only grows; and the state at every checkpoint equals the state of an
//!   uninterrupted reference run at the same step (a lost or doubly applied reducer write would
//!   show as a missing or duplicated `log` entry and a wrong `total`).
//! * **No finished task runs twice.** A task is *finished* once the saver holds its writes: as
//!   pending writes against the step's input checkpoint, or folded into a later checkpoint. After
//!   each kill the harness records what the saver held ([`Observation`]); no later process may
//!   execute (per the [`journal`](crate::journal)) a task that was finished at that moment. A task
//!   that was killed before its writes were saved may run again: that is the at-least-once
//!   guarantee the engine gives for unfinished work, and it is counted, not flagged
//!   ([`Coverage::executed_unsaved`]). Within one process a task runs at most once.
//! * **Every history is a valid chain**: the oldest checkpoint is the input (step -1, no parent),
//!   each later one has the previous one as parent and the next step number, ids increase, and the
//!   saver's latest is the newest listed. Every execution in the journal belongs to a task of
//!   that chain (no work was done for a checkpoint that was then lost), and every task of the
//!   chain was executed (the journal is complete).

use std::collections::{BTreeSet, HashMap, HashSet};

use graph_core::checkpoint::CheckpointSource;
use graph_core::{StateSnapshot, START};

use crate::journal::Record;
use crate::workload::Work;

/// What the saver held for a thread right after one of its workers was killed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The worker that was killed.
    pub incarnation: u32,
    /// The latest checkpoint's id and step; `None` when not even the input was saved.
    pub latest: Option<(String, i64)>,
    /// Tasks with (regular) writes saved against the latest checkpoint.
    pub saved: BTreeSet<String>,
    /// How many tasks the step after the latest checkpoint has.
    pub tasks: usize,
}

/// Where kills landed, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Kills observed.
    pub kills: usize,
    /// Before the input checkpoint was saved.
    pub before_input: usize,
    /// With no task of the next step saved yet (between steps, or inside the first node bodies).
    pub between_steps: usize,
    /// With some but not all tasks of a step saved.
    pub mid_step: usize,
    /// With every task of a step saved but its checkpoint not yet.
    pub step_saved: usize,
    /// After the final checkpoint was saved.
    pub after_end: usize,
    /// Executions that ended (journal record written) but whose writes were not saved when the
    /// process died: these tasks legitimately ran again.
    pub executed_unsaved: usize,
}

impl Coverage {
    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &Self) {
        self.kills += other.kills;
        self.before_input += other.before_input;
        self.between_steps += other.between_steps;
        self.mid_step += other.mid_step;
        self.step_saved += other.step_saved;
        self.after_end += other.after_end;
        self.executed_unsaved += other.executed_unsaved;
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} kills: {} before the input checkpoint, {} between steps, {} mid-step, {} with a step's \
             writes saved but not its checkpoint, {} after the last checkpoint; {} executions ended \
             but were unsaved at the kill (re-run as allowed)",
            self.kills,
            self.before_input,
            self.between_steps,
            self.mid_step,
            self.step_saved,
            self.after_end,
            self.executed_unsaved
        )
    }
}

/// A property of the module docs that does not hold.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Violation {
    /// The history's length differs from the reference run's.
    HistoryLength {
        /// Checkpoints of the reference run.
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
    /// An execution in the journal is not a task of the final chain.
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
    /// killed.
    RerunAfterSaved {
        /// The offending execution.
        record: Record,
        /// The process after whose kill the task was already finished.
        finished_by: u32,
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

/// Checks the chain properties of `history` (newest first, as `get_state_history` returns it)
/// against the saver's `latest` checkpoint id, and its states against `reference` (the same
/// shape, from an uninterrupted run).
pub fn check_history(
    history: &[StateSnapshot<Work>],
    latest: Option<&str>,
    reference: &[StateSnapshot<Work>],
) -> Vec<Violation> {
    let mut found = Vec::new();
    let id = |s: &StateSnapshot<Work>| s.config.as_ref().and_then(|c| c.checkpoint_id.clone());
    let newest = history.first().and_then(id);
    if latest != newest.as_deref() {
        found.push(Violation::LatestIsNotNewest { latest: latest.map(str::to_owned), newest });
    }
    if history.len() != reference.len() {
        found.push(Violation::HistoryLength { expected: reference.len(), actual: history.len() });
    }
    let oldest_first = history.iter().rev();
    let mut previous: Option<(&StateSnapshot<Work>, i64)> = None;
    for (index, snap) in oldest_first.enumerate() {
        let broken = |problem| Violation::BrokenChain { index, problem, checkpoint_id: id(snap) };
        let Some(meta) = &snap.metadata else {
            found.push(broken("no metadata"));
            continue;
        };
        let parent = snap.parent_config.as_ref().and_then(|c| c.checkpoint_id.clone());
        match previous {
            None => {
                if parent.is_some() || meta.step != -1 || meta.source != CheckpointSource::Input {
                    found.push(broken("the oldest checkpoint is not a parentless input at step -1"));
                }
            }
            Some((prev, prev_step)) => {
                if parent != id(prev) {
                    found.push(broken("its parent is not the previous checkpoint"));
                }
                if meta.step != prev_step + 1 {
                    found.push(broken("its step does not follow the previous one"));
                }
                if meta.source != CheckpointSource::Loop {
                    found.push(broken("its source is not `loop`"));
                }
                if id(snap) <= id(prev) {
                    found.push(broken("its id does not sort after the previous one"));
                }
            }
        }
        if let Some(want) = reference.get(reference.len().wrapping_sub(1 + index)) {
            if want.values != snap.values {
                found.push(Violation::StateDiffers {
                    step: meta.step,
                    expected: Box::new(want.values.clone()),
                    actual: Box::new(snap.values.clone()),
                });
            }
            if want.next != snap.next {
                found.push(Violation::NextDiffers {
                    step: meta.step,
                    expected: want.next.clone(),
                    actual: snap.next.clone(),
                });
            }
        }
        previous = Some((snap, meta.step));
    }
    found
}

/// Checks the journal's `records` against the final `history` (newest first) and the
/// `observations` made after each kill, and counts where the kills landed.
pub fn check_executions(
    history: &[StateSnapshot<Work>],
    records: &[Record],
    observations: &[Observation],
) -> (Vec<Violation>, Coverage) {
    let mut found = Vec::new();
    // The tasks of each step of the chain: those of the checkpoint before it.
    let mut chain: HashMap<i64, Vec<(String, String)>> = HashMap::new();
    for snap in history {
        let step = snap.metadata.as_ref().map_or(i64::MIN, |m| m.step) + 1;
        let tasks = snap.tasks.iter().filter(|t| t.name != START).map(|t| (t.id.clone(), t.name.clone()));
        chain.entry(step).or_default().extend(tasks);
    }
    let mut executed: HashSet<&str> = HashSet::new();
    let mut per_process: HashSet<(u32, &str)> = HashSet::new();
    for r in records {
        if !chain.get(&r.step).is_some_and(|tasks| tasks.iter().any(|(id, _)| *id == r.task_id)) {
            found.push(Violation::OrphanExecution(r.clone()));
        }
        if !per_process.insert((r.incarnation, &r.task_id)) {
            found.push(Violation::RanTwiceInOneProcess(r.clone()));
        }
        executed.insert(&r.task_id);
    }
    let mut steps: Vec<_> = chain.iter().collect();
    steps.sort_by_key(|(step, _)| **step);
    for (step, tasks) in steps {
        for (task_id, node) in tasks {
            if !executed.contains(task_id.as_str()) {
                found.push(Violation::NeverExecuted {
                    step: *step,
                    task_id: task_id.clone(),
                    node: node.clone(),
                });
            }
        }
    }
    let final_ids: HashSet<String> =
        history.iter().filter_map(|s| s.config.as_ref().and_then(|c| c.checkpoint_id.clone())).collect();
    let mut coverage = Coverage::default();
    let mut before: Option<&Observation> = None;
    for seen in observations {
        coverage.kills += 1;
        let last_step = seen.latest.as_ref().map_or(i64::MIN, |(_, step)| *step);
        for r in records.iter().filter(|r| r.incarnation > seen.incarnation) {
            if r.step <= last_step || seen.saved.contains(&r.task_id) {
                found.push(Violation::RerunAfterSaved { record: r.clone(), finished_by: seen.incarnation });
            }
        }
        coverage.executed_unsaved += records
            .iter()
            .filter(|r| r.incarnation == seen.incarnation && r.step == last_step.saturating_add(1))
            .filter(|r| !seen.saved.contains(&r.task_id))
            .count();
        match &seen.latest {
            None => coverage.before_input += 1,
            Some((id, _)) => {
                if !final_ids.contains(id) {
                    let lost = Violation::CheckpointLost {
                        after_kill_of: seen.incarnation,
                        checkpoint_id: id.clone(),
                    };
                    found.push(lost);
                }
                match seen.saved.len() {
                    _ if seen.tasks == 0 => coverage.after_end += 1,
                    0 => coverage.between_steps += 1,
                    n if n < seen.tasks => coverage.mid_step += 1,
                    _ => coverage.step_saved += 1,
                }
            }
        }
        if let Some(prev) = before {
            compare_observations(prev, seen, &mut found);
        }
        before = Some(seen);
    }
    (found, coverage)
}

/// What may not change between two consecutive kills of one thread.
fn compare_observations(prev: &Observation, seen: &Observation, found: &mut Vec<Violation>) {
    let (Some((prev_id, prev_step)), latest) = (&prev.latest, &seen.latest) else { return };
    let after_kill_of = seen.incarnation;
    match latest {
        None => found.push(Violation::CheckpointLost { after_kill_of, checkpoint_id: prev_id.clone() }),
        Some((_, step)) if step < prev_step => {
            found.push(Violation::WentBackwards { after_kill_of, from: *prev_step, to: *step });
        }
        Some((id, _)) if id == prev_id => {
            for task_id in prev.saved.difference(&seen.saved) {
                found.push(Violation::PendingWritesLost { after_kill_of, task_id: task_id.clone() });
            }
        }
        Some(_) => {}
    }
}
