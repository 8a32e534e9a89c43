//! What the saver held after each kill, against the final history and the kill before: nothing
//! once stored disappears, and an `exit` run stores all of itself or nothing.

use std::collections::HashSet;

use mnemograph_core::StateSnapshot;

use super::{Observation, Violation};
use crate::mode::Mode;
use crate::workload::Work;

/// Checks every observation of a thread run in `mode` against the final `history`, and each one
/// against the one before.
pub(super) fn check(
    mode: Mode,
    history: &[StateSnapshot<Work>],
    observations: &[Observation],
) -> Vec<Violation> {
    let mut found = Vec::new();
    let final_ids: HashSet<String> =
        history.iter().filter_map(|s| s.config.as_ref().and_then(|c| c.checkpoint_id.clone())).collect();
    let mut before: Option<&Observation> = None;
    for seen in observations {
        if let Some((id, step)) = &seen.latest {
            if !final_ids.contains(id) {
                found.push(Violation::CheckpointLost {
                    after_kill_of: seen.incarnation,
                    checkpoint_id: id.clone(),
                });
            }
            // An `exit` run's only checkpoint is its last: no task follows it, no write is
            // pending against it.
            if mode == Mode::Exit && !(seen.tasks.is_empty() && seen.saved.is_empty()) {
                found.push(Violation::PartialRun {
                    after_kill_of: seen.incarnation,
                    step: *step,
                    saved: seen.saved.len(),
                });
            }
        }
        if let Some(prev) = before {
            compare(prev, seen, &mut found);
        }
        before = Some(seen);
    }
    found
}

/// What may not change between two consecutive kills of one thread.
fn compare(prev: &Observation, seen: &Observation, found: &mut Vec<Violation>) {
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
