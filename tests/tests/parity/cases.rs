//! The graphs of `tests/python/parity.py`, node for node, on mnemograph-core.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use mnemograph_core::prelude::*;
use serde_json::json;

/// The state of every case: Python's `State` TypedDict.
#[derive(State, Clone, Default, Debug, PartialEq, serde::Serialize)]
pub(crate) struct S {
    #[reducer(append)]
    pub log: Vec<String>,
    pub answer: Option<String>,
    pub item: Option<String>,
}

/// Threads whose `worker` fails on item 2 (Python's `PARITY_FAIL`), per thread so that cases
/// running at the same time do not see each other's switch.
pub(crate) static FAILING: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn failing(thread: Option<&str>) -> bool {
    let set = FAILING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    thread.is_some_and(|t| set.as_ref().is_some_and(|s| s.contains(t)))
}

fn step(name: &'static str) -> impl Fn(S) -> std::future::Ready<Result<SUpdate>> + Send + Sync + 'static {
    move |_s: S| std::future::ready(Ok(SUpdate::log(vec![name.to_owned()])))
}

async fn ask(_s: S, rt: Runtime) -> Result<SUpdate> {
    let answer: String = rt.interrupt(json!({"question": "name?"}))?;
    Ok(SUpdate::log(vec![format!("ask:{answer}")]).with_answer(Some(answer)))
}

async fn ask_twice(_s: S, rt: Runtime) -> Result<SUpdate> {
    let first: String = rt.interrupt("first?")?;
    let second: String = rt.interrupt("second?")?;
    Ok(SUpdate::log(vec![format!("{first}+{second}")]))
}

/// A boxed node future, so `asker` can name its return type.
type NodeFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<SUpdate>> + Send>>;

fn asker(name: &'static str) -> impl Fn(S, Runtime) -> NodeFuture + Send + Sync + 'static {
    move |_s: S, rt: Runtime| {
        Box::pin(async move {
            let answer: String = rt.interrupt(format!("{name}?"))?;
            Ok(SUpdate::log(vec![format!("{name}:{answer}")]))
        })
    }
}

async fn fan(_s: S) -> Result<Vec<Push<S>>> {
    Ok(["1", "2", "3"]
        .iter()
        .map(|i| Push::new("worker", S { item: Some((*i).to_owned()), ..S::default() }))
        .collect())
}

async fn worker(s: S, rt: Runtime) -> Result<SUpdate> {
    let item = s.item.unwrap_or_default();
    if item == "2" && failing(rt.thread_id()) {
        // Fails after its siblings have finished, so their writes are the step's pending writes.
        tokio::time::sleep(Duration::from_millis(300)).await;
        return Err(Error::Node { node: "worker".into(), source: "boom".into() });
    }
    Ok(SUpdate::log(vec![format!("w{item}")]))
}

/// The graph of `case` on `saver` (MySQL's, SQLite's or Postgres', as the parity target running it has).
pub(crate) fn graph(case: &str, saver: impl Checkpointer) -> CompiledGraph<S> {
    let g = StateGraph::<S>::new();
    let g = match case {
        "interrupt_node" => g.add_node("ask", ask).add_edge(START, "ask").add_edge("ask", END),
        "double_interrupt" => {
            g.add_node("ask_twice", ask_twice).add_edge(START, "ask_twice").add_edge("ask_twice", END)
        }
        "interrupts_by_id" => g
            .add_node("a", asker("a"))
            .add_node("b", asker("b"))
            .add_edge(START, "a")
            .add_edge(START, "b")
            .add_edge("a", END)
            .add_edge("b", END),
        "subgraph_interrupt" => {
            let child = StateGraph::<S>::new()
                .add_node("ask", ask)
                .add_edge(START, "ask")
                .add_edge("ask", END)
                .compile()
                .expect("the child compiles");
            g.add_node("child", child)
                .add_node("after", step("after"))
                .add_edge(START, "child")
                .add_edge("child", "after")
                .add_edge("after", END)
        }
        "breakpoints" | "update_state" | "fork" => {
            let g = g
                .add_node("a", step("a"))
                .add_node("b", step("b"))
                .add_node("c", step("c"))
                .add_edge(START, "a")
                .add_edge("a", "b")
                .add_edge("b", "c")
                .add_edge("c", END);
            match case {
                "breakpoints" => g.interrupt_before(["b"]).interrupt_after(["c"]),
                "update_state" => g.interrupt_before(["b"]),
                _ => g,
            }
        }
        "join_breakpoint" => g
            .add_node("a", step("a"))
            .add_node("b", step("b"))
            .add_node("c", step("c"))
            .add_edge(START, "a")
            .add_edge(START, "b")
            .add_join(["a", "b"], "c")
            .add_edge("c", END)
            .interrupt_before(["c"]),
        "command" | "command_resume" => g
            .add_node("a", step("a"))
            .add_node("ask", ask)
            .add_node("b", step("b"))
            .add_edge(START, "a")
            .add_edge("a", "ask")
            .add_edge("ask", END)
            .add_edge("b", END),
        "push_failure" => g.add_node("fan", fan).add_node("worker", worker).add_edge(START, "fan"),
        other => panic!("unknown case {other}"),
    };
    g.compile_with(saver).expect("the case's graph compiles")
}
