//! `interrupt()` and resume, with LangGraph's semantics.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use mnemograph_core::prelude::*;
use mnemograph_core::Interrupt;

use crate::support::*;

/// One interrupt: the run returns it as an outcome; `get_state` shows the node as next; resuming
/// with a value re-runs the node from the top and `interrupt` returns the value.
#[tokio::test]
async fn test_interrupt_and_resume() {
    let runs = Arc::new(AtomicU32::new(0));
    let r = runs.clone();
    let g = StateGraph::<S>::new()
        .add_node("ask", move |_s: S, rt: Runtime| {
            r.fetch_add(1, Ordering::SeqCst);
            async move {
                let name: String = rt.interrupt(serde_json::json!({"question": "name?"}))?;
                Ok::<_, Error>(SUpdate::hello(name))
            }
        })
        .add_node("after", logger("after"))
        .add_edge(START, "ask")
        .add_edge("ask", "after")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert!(out.is_interrupted());
    assert_eq!(out.interrupts.len(), 1);
    assert_eq!(out.interrupts[0].value["question"], "name?");
    assert_eq!(out.interrupts[0].id.len(), 32);
    let state = g.get_state(&cfg).await.unwrap();
    assert_eq!(state.next, ["ask"]);
    assert_eq!(state.tasks[0].interrupts, out.interrupts);

    let out = g.invoke_input(Input::resume("Ada"), &cfg).await.unwrap();
    assert!(!out.is_interrupted());
    assert_eq!(out.hello, "Ada");
    assert_eq!(out.log, ["after"]);
    assert_eq!(runs.load(Ordering::SeqCst), 2, "the node re-runs from the top on resume");
}

/// Two `interrupt()` calls in one node need two resumes; the k-th call gets the k-th value.
#[tokio::test]
async fn test_interrupt_multiple() {
    let g = StateGraph::<S>::new()
        .add_node("form", |_s: S, rt: Runtime| async move {
            let a: String = rt.interrupt("first?")?;
            let b: String = rt.interrupt("second?")?;
            Ok::<_, Error>(SUpdate::hello(format!("{a}+{b}")))
        })
        .add_edge(START, "form")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let first = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert_eq!(first.interrupts[0].value, "first?");
    let second = g.invoke_input(Input::resume("x"), &cfg).await.unwrap();
    assert_eq!(second.interrupts.len(), 1);
    assert_eq!(second.interrupts[0].value, "second?");
    assert_ne!(second.interrupts[0].id, first.interrupts[0].id);
    let done = g.invoke_input(Input::resume("y"), &cfg).await.unwrap();
    assert!(!done.is_interrupted());
    assert_eq!(done.hello, "x+y");
}

/// Two parallel interrupts: a bare resume is ambiguous; a map by id answers both.
#[tokio::test]
async fn test_parallel_interrupts() {
    let g = StateGraph::<S>::new()
        .add_node("a", |_s: S, rt: Runtime| async move {
            let v: i64 = rt.interrupt("a?")?;
            Ok::<_, Error>(SUpdate::total(v))
        })
        .add_node("b", |_s: S, rt: Runtime| async move {
            let v: i64 = rt.interrupt("b?")?;
            Ok::<_, Error>(SUpdate::total(v))
        })
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert_eq!(out.interrupts.len(), 2);
    let err = g.invoke_input(Input::resume(1), &cfg).await.unwrap_err();
    assert!(matches!(err, Error::AmbiguousResume));
    assert_eq!(
        err.to_string(),
        "when there are multiple pending interrupts, you must specify the interrupt id when resuming"
    );
    let by_id: Vec<(String, i64)> = out
        .interrupts
        .iter()
        .map(|i: &Interrupt| (i.id.clone(), if i.value == "a?" { 10 } else { 20 }))
        .collect();
    let done = g.invoke_input(Input::ResumeWith(Resume::by_id(by_id)), &cfg).await.unwrap();
    assert!(!done.is_interrupted());
    assert_eq!(done.total, 30);
}

/// A node that finished beside an interrupted one is not re-run on resume.
#[tokio::test]
async fn test_resume_never_reapplies_completed_writes() {
    let runs = Arc::new(AtomicU32::new(0));
    let r = runs.clone();
    let g = StateGraph::<S>::new()
        .add_node("work", move |_s: S| {
            r.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, Error>(SUpdate::total(5)) }
        })
        .add_node("ask", |_s: S, rt: Runtime| async move {
            let ok: bool = rt.interrupt("approve?")?;
            Ok::<_, Error>(SUpdate::log(vec![format!("approved={ok}")]))
        })
        .add_edge(START, "work")
        .add_edge(START, "ask")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let done = g.invoke_input(Input::resume(true), &cfg).await.unwrap();
    assert_eq!(done.total, 5, "work's write applied exactly once");
    assert_eq!(done.log, ["approved=true"]);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// An interrupt inside a loop: each iteration asks again and gets its own answer.
#[tokio::test]
async fn test_interrupt_inside_loop() {
    let g = StateGraph::<S>::new()
        .add_node("ask", |_s: S, rt: Runtime| async move {
            let n: i64 = rt.interrupt("number?")?;
            Ok::<_, Error>(SUpdate::total(n))
        })
        .add_edge(START, "ask")
        .add_conditional_edges("ask", |s: &S| if s.total < 6 { "ask" } else { END }, ())
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let mut out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let mut answers = 0;
    while out.is_interrupted() {
        answers += 1;
        out = g.invoke_input(Input::resume(answers), &cfg).await.unwrap();
    }
    assert_eq!(answers, 3);
    assert_eq!(out.total, 6);
}
