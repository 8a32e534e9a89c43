use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use mnemograph_core::checkpoint::{CheckpointSource, ListOptions};
use mnemograph_core::prelude::*;
use mnemograph_core::Breakpoint;

use crate::support::*;

fn two_step() -> StateGraph<S> {
    StateGraph::<S>::new()
        .add_node("a", logger("a"))
        .add_node("b", logger("b"))
        .add_edge(START, "a")
        .add_edge("a", "b")
}

/// History of `START -> a -> b` is `loop 2, loop 1, loop 0, input -1`, newest first.
#[tokio::test]
async fn test_get_state_history_sources_and_steps() {
    let g = two_step().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    let got: Vec<(CheckpointSource, i64)> = history
        .iter()
        .map(|s| (s.metadata.as_ref().unwrap().source, s.metadata.as_ref().unwrap().step))
        .collect();
    use CheckpointSource::*;
    assert_eq!(got, [(Loop, 2), (Loop, 1), (Loop, 0), (Input, -1)]);
    assert_eq!(history[0].values.log, ["a", "b"]);
    assert!(history[0].next.is_empty());
    assert_eq!(history[1].next, ["b"]);
    assert_eq!(history[3].next, ["__start__"]);
    // Each checkpoint's parent is the one before it.
    for pair in history.windows(2) {
        assert_eq!(
            pair[0].parent_config.as_ref().unwrap().checkpoint_id,
            pair[1].config.as_ref().unwrap().checkpoint_id
        );
    }
}

/// Checkpoint metadata carries source, step, parents and the run's scalar metadata keys.
#[tokio::test]
async fn test_checkpoint_metadata() {
    let g = two_step().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t")
        .metadata("run_id", "r-1")
        .metadata("user", "u42")
        .metadata("__hidden", "x")
        .metadata("obj", serde_json::json!({"a": 1}));
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let state = g.get_state(&cfg).await.unwrap();
    let meta = state.metadata.unwrap();
    assert_eq!(meta.source, CheckpointSource::Loop);
    assert_eq!(meta.step, 2);
    assert!(meta.parents.is_empty());
    assert_eq!(meta.extra.get("run_id"), Some(&"r-1".into()));
    assert_eq!(meta.extra.get("user"), Some(&"u42".into()));
    assert!(!meta.extra.contains_key("__hidden"));
    assert!(!meta.extra.contains_key("obj"));
    // The metadata filter finds it.
    let mut f = serde_json::Map::new();
    f.insert("user".into(), "u42".into());
    f.insert("step".into(), 1.into());
    let found = g.get_state_history(&RunConfig::thread("t"), ListOptions::new().filter(f)).await.unwrap();
    assert_eq!(found.len(), 1);
}

/// Threads are isolated, and a second invoke continues a thread's state.
#[tokio::test]
async fn test_thread_isolation_and_continuation() {
    let g = two_step().compile_with(InMemoryCheckpointer::new()).unwrap();
    g.invoke(SUpdate::log(vec!["x".into()]), &RunConfig::thread("t1")).await.unwrap();
    let again = g.invoke(SUpdate::log(vec!["y".into()]), &RunConfig::thread("t1")).await.unwrap();
    assert_eq!(again.log, ["x", "a", "b", "y", "a", "b"]);
    let other = g.invoke(SUpdate::default(), &RunConfig::thread("t2")).await.unwrap();
    assert_eq!(other.log, ["a", "b"]);
    let hist = g.get_state_history(&RunConfig::thread("t1"), ListOptions::new()).await.unwrap();
    assert_eq!(hist.len(), 8);
    assert_eq!(hist[3].metadata.as_ref().unwrap().step, 3, "the second input continues the step count");
}

/// A checkpointer requires a thread id.
#[tokio::test]
async fn test_missing_thread_id() {
    let g = two_step().compile_with(InMemoryCheckpointer::new()).unwrap();
    let err = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap_err();
    assert!(matches!(err, Error::MissingThreadId));
}

/// `one` succeeds and `two` keeps failing: the latest checkpoint stays the step's input, `get_state`
/// shows one's write applied and `next == ["two"]`; resuming re-runs only `two`.
#[tokio::test]
async fn test_pending_writes_resume() {
    let one_runs = Arc::new(AtomicU32::new(0));
    let two_runs = Arc::new(AtomicU32::new(0));
    let fail = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let (o, t, f) = (one_runs.clone(), two_runs.clone(), fail.clone());
    let g = StateGraph::<S>::new()
        .add_node("one", move |_s: S| {
            o.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, Error>(SUpdate::total(2)) }
        })
        .add_node("two", move |_s: S| {
            t.fetch_add(1, Ordering::SeqCst);
            let failing = f.load(Ordering::SeqCst);
            async move {
                if failing {
                    Err(Error::UnknownNode("boom".into()))
                } else {
                    Ok(SUpdate::total(3))
                }
            }
        })
        .add_edge(START, "one")
        .add_edge(START, "two")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let err = g.invoke(SUpdate::total(1), &cfg).await.unwrap_err();
    assert!(matches!(err, Error::Node { ref node, .. } if node == "two"));
    let state = g.get_state(&cfg).await.unwrap();
    assert_eq!(state.values.total, 3, "one's write is applied in get_state");
    assert_eq!(state.next, ["two"]);
    // As in LangGraph, the finished task is listed too, without an error, but is not next.
    let names: Vec<&str> = state.tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["one", "two"]);
    assert_eq!(state.tasks[0].error, None);
    assert!(state.tasks[1].error.as_deref().unwrap().contains("boom"));
    assert_eq!(state.metadata.as_ref().unwrap().step, 0, "no checkpoint while the step keeps failing");

    // Still failing: no new checkpoint.
    assert!(g.resume(&cfg).await.is_err());
    assert_eq!(g.get_state(&cfg).await.unwrap().metadata.unwrap().step, 0);
    assert_eq!(one_runs.load(Ordering::SeqCst), 1, "one never re-runs");

    fail.store(false, Ordering::SeqCst);
    let out = g.resume(&cfg).await.unwrap();
    assert_eq!(out.total, 6);
    assert_eq!(one_runs.load(Ordering::SeqCst), 1);
    assert_eq!(two_runs.load(Ordering::SeqCst), 3);
}

/// The failed task's error is visible in `get_state().tasks`, and a new input continues the thread.
#[tokio::test]
async fn test_checkpoint_recovery() {
    let fail = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let f = fail.clone();
    let g = StateGraph::<S>::new()
        .add_node("parse", move |s: S| {
            let failing = f.load(Ordering::SeqCst);
            async move {
                if failing {
                    Err(Error::UnknownNode("cannot parse".into()))
                } else {
                    Ok(SUpdate::log(vec![format!("parsed {}", s.hello)]))
                }
            }
        })
        .add_edge(START, "parse")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    assert!(g.invoke(SUpdate::hello("x"), &cfg).await.is_err());
    let state = g.get_state(&cfg).await.unwrap();
    assert_eq!(state.tasks.len(), 1);
    assert_eq!(state.tasks[0].name, "parse");
    assert!(state.tasks[0].error.as_deref().unwrap().contains("cannot parse"));
    fail.store(false, Ordering::SeqCst);
    let out = g.invoke(SUpdate::hello("y"), &cfg).await.unwrap();
    assert_eq!(out.log, ["parsed y"]);
}

/// `durability = exit` writes only the final checkpoint; sync and async write every one, with the
/// same history.
#[tokio::test]
async fn test_durability_exit_writes_only_final_checkpoint() {
    let g = two_step().compile_with(InMemoryCheckpointer::new()).unwrap();
    let exit = RunConfig::thread("exit").durability(Durability::Exit);
    g.invoke(SUpdate::default(), &exit).await.unwrap();
    let h = g.get_state_history(&exit, ListOptions::new()).await.unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].values.log, ["a", "b"]);
    let sync = RunConfig::thread("sync");
    g.invoke(SUpdate::default(), &sync).await.unwrap();
    let sync_h = g.get_state_history(&sync, ListOptions::new()).await.unwrap();
    assert_eq!(sync_h.len(), 4);
    let asy = RunConfig::thread("async").durability(Durability::Async);
    g.invoke(SUpdate::default(), &asy).await.unwrap();
    let async_h = g.get_state_history(&asy, ListOptions::new()).await.unwrap();
    let shape = |h: &[mnemograph_core::StateSnapshot<S>]| -> Vec<(i64, Vec<String>, Vec<String>)> {
        h.iter().map(|s| (s.metadata.as_ref().unwrap().step, s.next.clone(), s.values.log.clone())).collect()
    };
    assert_eq!(shape(&sync_h), shape(&async_h));
    for pair in async_h.windows(2) {
        assert_eq!(
            pair[0].parent_config.as_ref().unwrap().checkpoint_id,
            pair[1].config.as_ref().unwrap().checkpoint_id
        );
    }
}

/// `update_state(as_node)` writes a `source = update` checkpoint whose next nodes are as_node's
/// successors, and reducers apply.
#[tokio::test]
async fn test_update_state_as_node() {
    let g = two_step().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let new_cfg = g.update_state(&cfg, SUpdate::log(vec!["edited".into()]), Some("a")).await.unwrap();
    let state = g.get_state(&cfg).await.unwrap();
    assert_eq!(state.config.as_ref().unwrap().checkpoint_id, new_cfg.checkpoint_id);
    let meta = state.metadata.unwrap();
    assert_eq!((meta.source, meta.step), (CheckpointSource::Update, 3));
    assert_eq!(state.values.log, ["a", "b", "edited"]);
    assert_eq!(state.next, ["b"]);
    let out = g.resume(&cfg).await.unwrap();
    assert_eq!(out.log, ["a", "b", "edited", "b"]);
    assert!(matches!(
        g.update_state(&cfg, SUpdate::default(), Some("nope")).await,
        Err(Error::UnknownNode(_))
    ));
}

/// Replaying from an older checkpoint forks: a `fork` checkpoint, then new loop checkpoints; the
/// old history is unchanged.
#[tokio::test]
async fn test_run_from_checkpoint_id_retains_previous_writes() {
    let g = two_step().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let before = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    let after_a = before[1].config.as_ref().unwrap().checkpoint_id.clone().unwrap();
    let out = g.resume(&RunConfig::thread("t").checkpoint_id(after_a.clone())).await.unwrap();
    assert_eq!(out.log, ["a", "b"]);
    let after = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    assert_eq!(after.len(), before.len() + 2);
    let m: Vec<(CheckpointSource, i64)> = after
        .iter()
        .take(2)
        .map(|s| (s.metadata.as_ref().unwrap().source, s.metadata.as_ref().unwrap().step))
        .collect();
    // As LangGraph numbers them: the fork is a step after the checkpoint it replays (step 1).
    assert_eq!(m, [(CheckpointSource::Loop, 3), (CheckpointSource::Fork, 2)]);
    assert_eq!(after[1].parent_config.as_ref().unwrap().checkpoint_id.as_deref(), Some(after_a.as_str()));
    for (old, new) in before.iter().zip(after.iter().skip(2)) {
        assert_eq!(old.config, new.config);
    }
}

/// An unknown thread gives an empty snapshot.
#[tokio::test]
async fn test_get_state_unknown_thread() {
    let g = two_step().compile_with(InMemoryCheckpointer::new()).unwrap();
    let s = g.get_state(&RunConfig::thread("never")).await.unwrap();
    assert_eq!(s.values, S::default());
    assert!(s.metadata.is_none() && s.next.is_empty());
}

/// Static breakpoints: compile-time `interrupt_before` stops before the node; resuming with no
/// input runs it; per-run `interrupt_after` stops after a node for that run only.
#[tokio::test]
async fn test_static_breakpoints_interrupt_before_and_after() {
    let g = two_step().interrupt_before(["b"]).compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    let out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert_eq!(out.breakpoint, Some(Breakpoint::Before(vec!["b".into()])));
    assert!(out.is_interrupted());
    assert_eq!(out.log, ["a"]);
    assert_eq!(g.get_state(&cfg).await.unwrap().next, ["b"]);
    let out = g.resume(&cfg).await.unwrap();
    assert!(!out.is_interrupted());
    assert_eq!(out.log, ["a", "b"]);

    let g = two_step().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t2").interrupt_after(["a"]);
    let out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert_eq!(out.breakpoint, Some(Breakpoint::After(vec!["a".into()])));
    assert_eq!(out.log, ["a"]);
    let out = g.resume(&RunConfig::thread("t2")).await.unwrap();
    assert_eq!(out.log, ["a", "b"]);
    // The per-run breakpoint does not outlive its run.
    let out = g.invoke(SUpdate::default(), &RunConfig::thread("t2")).await.unwrap();
    assert_eq!(out.log, ["a", "b", "a", "b"]);
}

/// `update_state` on an older checkpoint forks from it without applying that checkpoint's pending
/// writes (`test_fork_does_not_apply_pending_writes`).
#[tokio::test]
async fn test_fork_does_not_apply_pending_writes() {
    let g = StateGraph::<S>::new()
        .add_node("one", |_s: S| async { Ok::<_, Error>(SUpdate::total(2)) })
        .add_node("two", |_s: S| async { Err::<SUpdate, _>(Error::UnknownNode("always fails".into())) })
        .add_edge(START, "one")
        .add_edge(START, "two")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    assert!(g.invoke(SUpdate::total(1), &cfg).await.is_err());
    let stuck = g.get_state(&cfg).await.unwrap();
    assert_eq!(stuck.values.total, 3, "latest get_state applies one's pending write");
    let at = stuck.config.unwrap().checkpoint_id.unwrap();
    let forked = g
        .update_state(&RunConfig::thread("t").checkpoint_id(at.clone()), SUpdate::total(10), Some("one"))
        .await
        .unwrap();
    let state = g.get_state(&RunConfig::thread("t")).await.unwrap();
    assert_eq!(state.config.unwrap().checkpoint_id, forked.checkpoint_id);
    assert_eq!(state.parent_config.unwrap().checkpoint_id.as_deref(), Some(at.as_str()));
    assert_eq!(
        state.values.total, 11,
        "1 from the input + 10 from the update; one's pending 2 is not applied"
    );
}
