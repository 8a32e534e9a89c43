//! The journal against the final history and the observations: which executions happened, which
//! were allowed to happen again, and how much work a kill may have lost.

use std::collections::{HashMap, HashSet};

use mnemograph_core::{StateSnapshot, START};

use super::{Observation, Violation};
use crate::coverage::{Bucket, Coverage};
use crate::journal::Record;
use crate::mode::Mode;
use crate::reference::Reference;
use crate::workload::Work;

/// Checks the journal's `records` of a thread run in `mode` against its final `history` (newest
/// first), the `observations` made after each kill and the `reference` run, and counts where the
/// kills landed.
pub fn check_executions(
    mode: Mode,
    history: &[StateSnapshot<Work>],
    records: &[Record],
    observations: &[Observation],
    reference: &Reference,
) -> (Vec<Violation>, Coverage) {
    let mut found = Vec::new();
    let mut per_process: HashSet<(u32, &str)> = HashSet::new();
    for r in records {
        if !per_process.insert((r.incarnation, &r.task_id)) {
            found.push(Violation::RanTwiceInOneProcess(r.clone()));
        }
    }
    match mode {
        Mode::Sync | Mode::Async => chain_executions(mode, history, records, observations, &mut found),
        Mode::Exit => exit_run(records, observations, reference, &mut found),
    }
    let mut coverage = Coverage::default();
    for seen in observations {
        let own: Vec<&Record> = records.iter().filter(|r| r.incarnation == seen.incarnation).collect();
        coverage.add(Bucket::of(seen, &own));
        let latest = seen.latest_step();
        if let (Some(allowed), Some(newest)) = (mode.unsaved_steps(), own.iter().map(|r| r.step).max()) {
            if newest > latest + allowed {
                found.push(Violation::ProgressLost {
                    incarnation: seen.incarnation,
                    latest_step: latest,
                    step: newest,
                });
            }
        }
        let unsaved = |r: &&&Record| r.step > latest && !seen.saved.contains(&r.task_id);
        coverage.executed_unsaved += own.iter().filter(unsaved).count();
        for r in records.iter().filter(|r| r.incarnation > seen.incarnation) {
            if (seen.latest.is_some() && r.step <= latest) || seen.saved.contains(&r.task_id) {
                found.push(Violation::RerunAfterSaved { record: r.clone(), finished_by: seen.incarnation });
            }
        }
    }
    (found, coverage)
}

/// `sync` and `async`: every execution is a task of the chain — or, in `async`, of the
/// checkpoint a killed worker's save lost (step `L + 2`) — and every task of the chain was
/// executed.
fn chain_executions(
    mode: Mode,
    history: &[StateSnapshot<Work>],
    records: &[Record],
    observations: &[Observation],
    found: &mut Vec<Violation>,
) {
    // The tasks of each step of the chain: those of the checkpoint before it.
    let mut chain: HashMap<i64, Vec<(String, String)>> = HashMap::new();
    for snap in history {
        let step = snap.metadata.as_ref().map_or(i64::MIN, |m| m.step) + 1;
        let tasks = snap.tasks.iter().filter(|t| t.name != START).map(|t| (t.id.clone(), t.name.clone()));
        chain.entry(step).or_default().extend(tasks);
    }
    // Where each killed worker's work may have been lost: from the step after the one its
    // newest stored checkpoint's tasks belong to.
    let lost_from: HashMap<u32, i64> =
        observations.iter().map(|seen| (seen.incarnation, seen.latest_step() + 2)).collect();
    let mut executed: HashSet<&str> = HashSet::new();
    for r in records {
        executed.insert(&r.task_id);
        if chain.get(&r.step).is_some_and(|tasks| tasks.iter().any(|(id, _)| *id == r.task_id)) {
            continue;
        }
        let lost = mode == Mode::Async && lost_from.get(&r.incarnation).is_some_and(|from| r.step >= *from);
        if !lost {
            found.push(Violation::OrphanExecution(r.clone()));
        }
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
}

/// `exit`: the worker whose run stored the final checkpoint — the first one killed after it was
/// stored, or else the one that completed — executed exactly the reference run's executions.
fn exit_run(
    records: &[Record],
    observations: &[Observation],
    reference: &Reference,
    found: &mut Vec<Violation>,
) {
    let completed = u32::try_from(observations.len()).unwrap_or(u32::MAX);
    let incarnation =
        observations.iter().find(|seen| seen.latest.is_some()).map_or(completed, |seen| seen.incarnation);
    let mut actual: Vec<(i64, String)> =
        records.iter().filter(|r| r.incarnation == incarnation).map(|r| (r.step, r.node.clone())).collect();
    actual.sort();
    if actual != reference.executions {
        found.push(Violation::RunDiffers { incarnation, expected: reference.executions.clone(), actual });
    }
}
