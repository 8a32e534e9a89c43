//! The final history: a single chain equal, checkpoint by checkpoint, to an uninterrupted run's
//! (`sync`, `async`), or the uninterrupted run's last checkpoint alone (`exit`).

use mnemograph_core::checkpoint::CheckpointSource;
use mnemograph_core::StateSnapshot;

use super::Violation;
use crate::workload::Work;

fn id(s: &StateSnapshot<Work>) -> Option<String> {
    s.config.as_ref().and_then(|c| c.checkpoint_id.clone())
}

fn parent(s: &StateSnapshot<Work>) -> Option<String> {
    s.parent_config.as_ref().and_then(|c| c.checkpoint_id.clone())
}

/// The saver's latest checkpoint is the newest listed.
fn latest_is_newest(history: &[StateSnapshot<Work>], latest: Option<&str>, found: &mut Vec<Violation>) {
    let newest = history.first().and_then(id);
    if latest != newest.as_deref() {
        found.push(Violation::LatestIsNotNewest { latest: latest.map(str::to_owned), newest });
    }
}

/// The state and next nodes of `snap` (at `step`) are `want`'s.
fn same_as(want: &StateSnapshot<Work>, snap: &StateSnapshot<Work>, step: i64, found: &mut Vec<Violation>) {
    if want.values != snap.values {
        found.push(Violation::StateDiffers {
            step,
            expected: Box::new(want.values.clone()),
            actual: Box::new(snap.values.clone()),
        });
    }
    if want.next != snap.next {
        found.push(Violation::NextDiffers { step, expected: want.next.clone(), actual: snap.next.clone() });
    }
}

/// Checks that `history` (newest first) is a valid chain — the oldest checkpoint the parentless
/// input at step -1, each later one a `loop` checkpoint whose parent is the one before, at the
/// next step, with a greater id — whose newest is the saver's `latest`, and whose every
/// checkpoint has the state and next nodes of `reference`'s at the same position.
pub fn check_history(
    history: &[StateSnapshot<Work>],
    latest: Option<&str>,
    reference: &[StateSnapshot<Work>],
) -> Vec<Violation> {
    let mut found = Vec::new();
    latest_is_newest(history, latest, &mut found);
    if history.len() != reference.len() {
        found.push(Violation::HistoryLength { expected: reference.len(), actual: history.len() });
    }
    let mut previous: Option<(&StateSnapshot<Work>, i64)> = None;
    for (index, snap) in history.iter().rev().enumerate() {
        let broken = |problem| Violation::BrokenChain { index, problem, checkpoint_id: id(snap) };
        let Some(meta) = &snap.metadata else {
            found.push(broken("no metadata"));
            continue;
        };
        match previous {
            None => {
                if parent(snap).is_some() || meta.step != -1 || meta.source != CheckpointSource::Input {
                    found.push(broken("the oldest checkpoint is not a parentless input at step -1"));
                }
            }
            Some((prev, prev_step)) => {
                if parent(snap) != id(prev) {
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
            same_as(want, snap, meta.step, &mut found);
        }
        previous = Some((snap, meta.step));
    }
    found
}

/// Checks that `history` (newest first) is one checkpoint, the saver's `latest`: parentless
/// (the thread had nothing before the run), of source `loop`, at the step of `reference`'s
/// newest checkpoint and with its state and next nodes — what an `exit` run stores at its end,
/// and all it stores.
pub fn check_exit_history(
    history: &[StateSnapshot<Work>],
    latest: Option<&str>,
    reference: &[StateSnapshot<Work>],
) -> Vec<Violation> {
    let mut found = Vec::new();
    latest_is_newest(history, latest, &mut found);
    if history.len() != 1 {
        found.push(Violation::HistoryLength { expected: 1, actual: history.len() });
    }
    let (Some(snap), Some(want)) = (history.last(), reference.first()) else { return found };
    let broken = |problem| Violation::BrokenChain { index: 0, problem, checkpoint_id: id(snap) };
    let (Some(meta), Some(want_meta)) = (&snap.metadata, &want.metadata) else {
        found.push(broken("no metadata"));
        return found;
    };
    if parent(snap).is_some() {
        found.push(broken("the run's checkpoint has a parent on a thread that had none"));
    }
    if meta.source != CheckpointSource::Loop || meta.step != want_meta.step {
        found.push(broken("the run's checkpoint is not a `loop` checkpoint at the run's last step"));
    }
    same_as(want, snap, meta.step, &mut found);
    found
}
