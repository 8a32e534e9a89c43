//! The checks are not vacuous: each property violation, planted in an otherwise clean history of
//! a real (in-process) run, is reported, and the allowed re-run of an unsaved task is not.

use std::collections::BTreeSet;

use crash::checks::{check_executions, check_history, Observation, Violation};
use crash::journal::Record;
use crash::worker::run_config;
use crash::workload::{self, Instrument, Work};
use graph_core::checkpoint::{InMemoryCheckpointer, ListOptions};
use graph_core::{StateSnapshot, START};

/// A clean history, newest first, from an uninterrupted run.
async fn history() -> Vec<StateSnapshot<Work>> {
    let g = workload::graph(&Instrument::none()).unwrap().with_checkpointer(InMemoryCheckpointer::new());
    let cfg = run_config("checkers");
    g.invoke(workload::input(), &cfg).await.unwrap();
    g.get_state_history(&cfg, ListOptions::new()).await.unwrap()
}

fn id(s: &StateSnapshot<Work>) -> String {
    s.config.as_ref().and_then(|c| c.checkpoint_id.clone()).unwrap()
}

fn step(s: &StateSnapshot<Work>) -> i64 {
    s.metadata.as_ref().unwrap().step
}

/// One record per task of the chain, all by `incarnation`.
fn records(history: &[StateSnapshot<Work>], incarnation: u32) -> Vec<Record> {
    let mut out = Vec::new();
    for snap in history.iter().rev() {
        for t in snap.tasks.iter().filter(|t| t.name != START) {
            let (task_id, node) = (t.id.clone(), t.name.clone());
            out.push(Record { incarnation, step: step(snap) + 1, task_id, node });
        }
    }
    out
}

/// The snapshot whose next step is the fan-out (seven parallel tasks).
fn before_fan_out(history: &[StateSnapshot<Work>]) -> &StateSnapshot<Work> {
    history.iter().find(|s| s.tasks.len() == 7).unwrap()
}

#[tokio::test]
async fn a_clean_history_passes() {
    let h = history().await;
    assert!(check_history(&h, Some(&id(&h[0])), &h).is_empty());
    let (found, coverage) = check_executions(&h, &records(&h, 0), &[]);
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(coverage.kills, 0);
}

#[tokio::test]
async fn a_missing_or_stale_checkpoint_breaks_the_chain() {
    let reference = history().await;
    let mut h = reference.clone();
    h.remove(5);
    let found = check_history(&h, Some(&id(&h[0])), &reference);
    assert!(
        found.contains(&Violation::HistoryLength { expected: reference.len(), actual: reference.len() - 1 })
    );
    assert!(found
        .iter()
        .any(|v| matches!(v, Violation::BrokenChain { problem, .. } if problem.contains("parent"))));
    let stale = id(&reference[1]);
    let found = check_history(&reference, Some(&stale), &reference);
    assert!(matches!(&found[..], [Violation::LatestIsNotNewest { .. }]), "{found:?}");
}

#[tokio::test]
async fn a_reducer_write_applied_twice_is_caught() {
    let reference = history().await;
    let mut h = reference.clone();
    let dup = h[0].values.log[3].clone();
    h[0].values.log.push(dup);
    let found = check_history(&h, Some(&id(&h[0])), &reference);
    assert!(matches!(&found[..], [Violation::StateDiffers { step: 12, .. }]), "{found:?}");
}

#[tokio::test]
async fn a_saved_task_run_again_is_caught_and_an_unsaved_one_is_allowed() {
    let h = history().await;
    let at = before_fan_out(&h);
    let (saved_task, unsaved_task) = (at.tasks[0].id.clone(), at.tasks[1].id.clone());
    // Worker 0 ran both tasks; only the first one's writes were saved when it was killed.
    let seen = Observation {
        incarnation: 0,
        latest: Some((id(at), step(at))),
        saved: BTreeSet::from([saved_task.clone()]),
        tasks: at.tasks.len(),
    };
    let mut journal: Vec<Record> = records(&h, 1);
    let ran = |task: &str, incarnation| Record {
        incarnation,
        step: step(at) + 1,
        task_id: task.to_owned(),
        node: "a".into(),
    };
    let (first, second) = (ran(&saved_task, 0), ran(&unsaved_task, 0));
    journal.extend([first, second]);
    // Worker 1 (all of `records(&h, 1)`) re-ran both.
    let (found, coverage) = check_executions(&h, &journal, &[seen]);
    let rerun = |v: &&Violation| matches!(v, Violation::RerunAfterSaved { record, finished_by: 0 } if record.task_id == saved_task && record.incarnation == 1);
    assert_eq!(found.iter().filter(rerun).count(), 1, "{found:?}");
    // Every step up to the fan-out is finished at the kill too, and worker 1 re-ran those tasks.
    assert!(found.iter().all(|v| matches!(v, Violation::RerunAfterSaved { .. })), "{found:?}");
    assert!(!found
        .iter()
        .any(|v| matches!(v, Violation::RerunAfterSaved { record, .. } if record.task_id == unsaved_task)));
    assert_eq!((coverage.kills, coverage.mid_step, coverage.executed_unsaved), (1, 1, 1));
}

#[tokio::test]
async fn orphan_missing_and_doubled_executions_are_caught() {
    let h = history().await;
    let mut journal = records(&h, 0);
    let missing = journal.remove(2);
    journal.push(journal[0].clone());
    let orphan = Record { incarnation: 0, step: 3, task_id: "not-a-task".into(), node: "a".into() };
    journal.push(orphan.clone());
    let (found, _) = check_executions(&h, &journal, &[]);
    assert!(found.contains(&Violation::OrphanExecution(orphan)));
    assert!(found.contains(&Violation::RanTwiceInOneProcess(journal[0].clone())));
    assert!(found
        .iter()
        .any(|v| matches!(v, Violation::NeverExecuted { task_id, .. } if *task_id == missing.task_id)));
}

#[tokio::test]
async fn lost_checkpoints_and_pending_writes_are_caught() {
    let h = history().await;
    let at = before_fan_out(&h);
    let observe = |incarnation, latest: Option<(String, i64)>, saved: &[&str]| Observation {
        incarnation,
        latest,
        saved: saved.iter().map(|s| (*s).to_owned()).collect(),
        tasks: 7,
    };
    let here = Some((id(at), step(at)));
    let lost = Some(("0000-not-in-history".to_owned(), step(at) + 1));
    let earlier = Some((id(&h[h.len() - 1]), -1));
    let seen = [
        observe(0, here.clone(), &["x", "y"]),
        observe(1, here, &["x"]),
        observe(2, lost, &[]),
        observe(3, earlier, &[]),
    ];
    let (found, coverage) = check_executions(&h, &records(&h, 9), &seen);
    assert!(found.contains(&Violation::PendingWritesLost { after_kill_of: 1, task_id: "y".into() }));
    let lost = |v: &&Violation| matches!(v, Violation::CheckpointLost { after_kill_of: 2, .. });
    assert_eq!(found.iter().filter(lost).count(), 1);
    assert!(found.contains(&Violation::WentBackwards { after_kill_of: 3, from: step(at) + 1, to: -1 }));
    assert_eq!(coverage.kills, 4);
}
