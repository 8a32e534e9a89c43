//! The graph the kill tests run: three steps, each waiting a while and logging `{tag}:{node}`,
//! so a thread's log shows whether every step of every run ran once and in order.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use mnemograph_core::prelude::*;

/// A run's state: its tag (the run's input) and the log its steps append to.
#[derive(State, Clone, Default, Debug)]
pub(crate) struct Steps {
    /// Which run this is.
    pub(crate) tag: String,
    #[reducer(append)]
    pub(crate) log: Vec<String>,
}

type StepFn = Pin<Box<dyn Future<Output = Result<StepsUpdate>> + Send>>;

fn step(name: &'static str, pause: Duration) -> impl Fn(Steps) -> StepFn + Clone {
    move |s: Steps| {
        Box::pin(async move {
            tokio::time::sleep(pause).await;
            Ok(StepsUpdate::log(vec![format!("{}:{name}", s.tag)]))
        })
    }
}

/// `a → b → c`, each step waiting `pause`.
pub(crate) fn steps(pause: Duration) -> StateGraph<Steps> {
    StateGraph::<Steps>::new()
        .add_node("a", step("a", pause))
        .add_node("b", step("b", pause))
        .add_node("c", step("c", pause))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
}

/// What a thread's log holds once runs `0..runs` tagged `t{thread}r{i}` all ran.
pub(crate) fn expected_log(thread: usize, runs: usize) -> Vec<String> {
    (0..runs).flat_map(|i| ["a", "b", "c"].map(|node| format!("t{thread}r{i}:{node}"))).collect()
}
