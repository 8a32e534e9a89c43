//! The checks are not vacuous: each violation of a mode's promise, planted in an otherwise clean
//! history of a real (in-process) run, is reported, and what the mode allows (re-running an
//! unsaved task, `async` work on the checkpoint whose save was lost) is not.

use std::collections::BTreeSet;

use crash::checks::{check_history, check_thread, Observation, Violation};
use crash::coverage::Bucket;
use crash::journal::Record;
use crash::mode::Mode;
use crash::reference::Reference;
use crash::worker::run_config;
use crash::workload::{self, Instrument, Work};
use mnemograph_core::checkpoint::{InMemoryCheckpointer, ListOptions};
use mnemograph_core::{StateSnapshot, START};

/// A clean history of an uninterrupted run in `mode`, newest first.
async fn history(mode: Mode) -> Vec<StateSnapshot<Work>> {
    let g = workload::graph(&Instrument::none()).unwrap().with_checkpointer(InMemoryCheckpointer::new());
    let cfg = run_config("checkers", mode);
    g.invoke(workload::input(), &cfg).await.unwrap();
    g.get_state_history(&cfg, ListOptions::new()).await.unwrap()
}

/// The reference run, as the harness makes it.
async fn reference() -> Reference {
    let path = std::env::temp_dir()
        .join(format!("crash-checkers-{}.log", mnemograph_core::checkpoint::backend::uuid6(0)));
    let reference = Reference::run(&path).await.unwrap();
    std::fs::remove_file(&path).unwrap();
    reference
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

/// One record per execution of the reference run, all by `incarnation` (an `exit` history has no
/// tasks to take them from).
fn run_records(reference: &Reference, incarnation: u32) -> Vec<Record> {
    let each = reference.executions.iter().enumerate();
    each.map(|(i, (step, node))| Record {
        incarnation,
        step: *step,
        task_id: format!("x{incarnation}-{i}"),
        node: node.clone(),
    })
    .collect()
}

/// The snapshot whose next step is the fan-out (seven parallel tasks).
fn before_fan_out(history: &[StateSnapshot<Work>]) -> &StateSnapshot<Work> {
    history.iter().find(|s| s.tasks.len() == 7).unwrap()
}

/// What the saver held after worker `incarnation` was killed: `at` as the latest checkpoint
/// (nothing when `None`) with `saved` tasks' writes.
fn seen(incarnation: u32, at: Option<&StateSnapshot<Work>>, saved: &[&str]) -> Observation {
    Observation {
        incarnation,
        latest: at.map(|s| (id(s), step(s))),
        saved: saved.iter().map(|s| (*s).to_owned()).collect(),
        tasks: at.map_or_else(BTreeSet::new, |s| s.tasks.iter().map(|t| t.id.clone()).collect()),
    }
}

#[tokio::test]
async fn clean_histories_pass_in_every_mode() {
    let reference = reference().await;
    for mode in [Mode::Sync, Mode::Async] {
        let h = history(mode).await;
        let (found, coverage) = check_thread(mode, &h, Some(&id(&h[0])), &reference, &records(&h, 0), &[]);
        assert!(found.is_empty(), "{mode}: {found:?}");
        assert_eq!(coverage.kills, 0);
    }
    let h = history(Mode::Exit).await;
    assert_eq!(h.len(), 1);
    let found =
        check_thread(Mode::Exit, &h, Some(&id(&h[0])), &reference, &run_records(&reference, 0), &[]).0;
    assert!(found.is_empty(), "{found:?}");
}

#[tokio::test]
async fn a_missing_or_stale_checkpoint_breaks_the_chain() {
    let reference = history(Mode::Sync).await;
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
    let reference = history(Mode::Sync).await;
    let mut h = reference.clone();
    let dup = h[0].values.log[3].clone();
    h[0].values.log.push(dup);
    let found = check_history(&h, Some(&id(&h[0])), &reference);
    assert!(matches!(&found[..], [Violation::StateDiffers { step: 12, .. }]), "{found:?}");
}

#[tokio::test]
async fn a_saved_task_run_again_is_caught_and_an_unsaved_one_is_allowed() {
    let reference = reference().await;
    let h = history(Mode::Sync).await;
    let at = before_fan_out(&h);
    let (saved_task, unsaved_task) = (at.tasks[0].id.clone(), at.tasks[1].id.clone());
    // Worker 0 ran both tasks; only the first one's writes were saved when it was killed.
    let kill = seen(0, Some(at), &[&saved_task]);
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
    let (found, coverage) = check_thread(Mode::Sync, &h, Some(&id(&h[0])), &reference, &journal, &[kill]);
    let rerun = |v: &&Violation| matches!(v, Violation::RerunAfterSaved { record, finished_by: 0 } if record.task_id == saved_task && record.incarnation == 1);
    assert_eq!(found.iter().filter(rerun).count(), 1, "{found:?}");
    // Every step up to the fan-out is finished at the kill too, and worker 1 re-ran those tasks.
    assert!(found.iter().all(|v| matches!(v, Violation::RerunAfterSaved { .. })), "{found:?}");
    assert!(!found
        .iter()
        .any(|v| matches!(v, Violation::RerunAfterSaved { record, .. } if record.task_id == unsaved_task)));
    assert_eq!((coverage.kills, coverage.count(Bucket::MidStep), coverage.executed_unsaved), (1, 1, 1));
}

#[tokio::test]
async fn orphan_missing_and_doubled_executions_are_caught() {
    let reference = reference().await;
    let h = history(Mode::Sync).await;
    let mut journal = records(&h, 0);
    let missing = journal.remove(2);
    journal.push(journal[0].clone());
    let orphan = Record { incarnation: 0, step: 3, task_id: "not-a-task".into(), node: "a".into() };
    journal.push(orphan.clone());
    let (found, _) = check_thread(Mode::Sync, &h, Some(&id(&h[0])), &reference, &journal, &[]);
    assert!(found.contains(&Violation::OrphanExecution(orphan)));
    assert!(found.contains(&Violation::RanTwiceInOneProcess(journal[0].clone())));
    assert!(found
        .iter()
        .any(|v| matches!(v, Violation::NeverExecuted { task_id, .. } if *task_id == missing.task_id)));
}

#[tokio::test]
async fn lost_checkpoints_and_pending_writes_are_caught() {
    let reference = reference().await;
    let h = history(Mode::Sync).await;
    let at = before_fan_out(&h);
    let observe = |incarnation, latest: Option<(String, i64)>, saved: &[&str]| Observation {
        incarnation,
        latest,
        saved: saved.iter().map(|s| (*s).to_owned()).collect(),
        tasks: BTreeSet::from(["x".to_owned()]),
    };
    let here = Some((id(at), step(at)));
    let lost = Some(("0000-not-in-history".to_owned(), step(at) + 1));
    let earlier = Some((id(&h[h.len() - 1]), -1));
    let kills = [
        observe(0, here.clone(), &["x", "y"]),
        observe(1, here, &["x"]),
        observe(2, lost, &[]),
        observe(3, earlier, &[]),
    ];
    let (found, coverage) =
        check_thread(Mode::Sync, &h, Some(&id(&h[0])), &reference, &records(&h, 9), &kills);
    assert!(found.contains(&Violation::PendingWritesLost { after_kill_of: 1, task_id: "y".into() }));
    let lost = |v: &&Violation| matches!(v, Violation::CheckpointLost { after_kill_of: 2, .. });
    assert_eq!(found.iter().filter(lost).count(), 1);
    assert!(found.contains(&Violation::WentBackwards { after_kill_of: 3, from: step(at) + 1, to: -1 }));
    assert_eq!(coverage.kills, 4);
}

/// Checks a thread of `mode` with history `h` whose worker 0 was killed with `h[latest]`
/// stored and had finished `extra` besides the chain's tasks up to it; worker 1 ran the rest.
fn killed_with(
    mode: Mode,
    h: &[StateSnapshot<Work>],
    reference: &Reference,
    latest: usize,
    extra: &Record,
) -> Vec<Violation> {
    let at = &h[latest];
    let mut journal: Vec<Record> = records(h, 0).into_iter().filter(|r| r.step <= step(at)).collect();
    journal.push(extra.clone());
    journal.extend(records(h, 1).into_iter().filter(|r| r.step > step(at)));
    check_thread(mode, h, Some(&id(&h[0])), reference, &journal, &[seen(0, Some(at), &[])]).0
}

/// A record of worker 0 `ahead` steps past the checkpoint `h[latest]`: the chain's own task
/// there, or one the chain does not have.
fn ahead(h: &[StateSnapshot<Work>], latest: usize, ahead: usize, in_chain: bool) -> Record {
    let task = &h[latest + 1 - ahead].tasks[0];
    let task_id = if in_chain { task.id.clone() } else { format!("lost-{}", task.id) };
    Record { incarnation: 0, step: step(&h[latest]) + ahead as i64, task_id, node: task.name.clone() }
}

#[tokio::test]
async fn work_lost_beyond_what_the_mode_allows_is_caught() {
    let (reference, h) = (reference().await, history(Mode::Sync).await);
    let check = |mode, extra: &Record| killed_with(mode, &h, &reference, 7, extra);
    let progress = |v: &Violation| matches!(v, Violation::ProgressLost { incarnation: 0, .. });
    // Killed with step 5 (`h[7]`) stored, having finished a task of step 7: a whole step lost.
    let two_ahead = ahead(&h, 7, 2, false);
    let sync = check(Mode::Sync, &two_ahead);
    assert!(sync.iter().any(progress), "{sync:?}");
    assert!(sync.contains(&Violation::OrphanExecution(two_ahead.clone())), "{sync:?}");
    // `async` may lose the save in flight, and the work done on it.
    let lost_save = check(Mode::Async, &two_ahead);
    assert!(lost_save.is_empty(), "{lost_save:?}");
    let more = check(Mode::Async, &ahead(&h, 7, 3, false));
    assert!(more.iter().any(progress), "{more:?}");
    // A task that started from a stored checkpoint is of the chain, in `async` too.
    let next = ahead(&h, 7, 1, false);
    assert_eq!(check(Mode::Async, &next), [Violation::OrphanExecution(next)]);
    let in_chain = check(Mode::Sync, &ahead(&h, 7, 1, true));
    assert!(in_chain.is_empty(), "{in_chain:?}");
}

#[tokio::test]
async fn an_exit_run_stored_in_part_or_run_wrongly_is_caught() {
    let reference = reference().await;
    let h = history(Mode::Exit).await;
    let latest = Some(id(&h[0]));
    let whole = run_records(&reference, 1);
    // Worker 0 left a checkpoint with tasks after it; worker 1 ran the whole run.
    let partial = history(Mode::Sync).await;
    let mid = seen(0, Some(before_fan_out(&partial)), &[]);
    let found = check_thread(Mode::Exit, &h, latest.as_deref(), &reference, &whole, &[mid]).0;
    assert!(found.iter().any(|v| matches!(v, Violation::PartialRun { after_kill_of: 0, saved: 0, .. })));
    // The run that stored the final checkpoint, the only one, skipped an execution.
    let only = run_records(&reference, 0);
    let skipped = &only[..only.len() - 1];
    let found = check_thread(Mode::Exit, &h, latest.as_deref(), &reference, skipped, &[]).0;
    assert!(matches!(&found[..], [Violation::RunDiffers { incarnation: 0, .. }]), "{found:?}");
    // Worker 0 was killed after the final checkpoint was stored; worker 1 ran something again.
    let mut again = run_records(&reference, 0);
    again.push(run_records(&reference, 1).remove(0));
    let done = seen(0, Some(&h[0]), &[]);
    let found = check_thread(Mode::Exit, &h, latest.as_deref(), &reference, &again, &[done]).0;
    assert!(matches!(&found[..], [Violation::RerunAfterSaved { finished_by: 0, .. }]), "{found:?}");
    // A checkpoint of the run's middle is stored besides its last.
    let two = [h[0].clone(), partial[3].clone()];
    let found = check_thread(Mode::Exit, &two, latest.as_deref(), &reference, &whole, &[]).0;
    assert!(found.contains(&Violation::HistoryLength { expected: 1, actual: 2 }), "{found:?}");
    // Killed mid-run with nothing stored: that worker's executions are discarded.
    let mut restarted = run_records(&reference, 0)[..5].to_vec();
    restarted.extend(whole);
    let found =
        check_thread(Mode::Exit, &h, latest.as_deref(), &reference, &restarted, &[seen(0, None, &[])]);
    assert!(found.0.is_empty(), "{:?}", found.0);
    assert_eq!(found.1.count(Bucket::LostCheckpoint), 1);
}
