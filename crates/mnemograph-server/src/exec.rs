//! Running one run of a served graph, wherever it runs: its events as the API names them, how it
//! ended, and what that leaves on its thread. The in-process server and the cluster's workers
//! both run runs through here.

use std::future::Future;
use std::pin::pin;

use futures_util::future::{select, Either};
use futures_util::StreamExt;
use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::RunConfig;
use serde_json::{json, Map, Value};

use crate::events::Translator;
use crate::hooks::{RunContext, RunEnd};
use crate::records::now;
use crate::run::{Plan, Stop};
use crate::served::ServedGraph;

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    Done,
    Failed(Value),
    Stopped(Stop),
}

impl Outcome {
    /// The run's status once it ended.
    pub(crate) fn status(&self) -> &'static str {
        match self {
            Self::Done => "success",
            Self::Failed(_) => "error",
            Self::Stopped(_) => "interrupted",
        }
    }
}

/// What a run leaves on its thread and answers `wait` and `join` with.
#[derive(Debug, Clone)]
pub(crate) struct Settled {
    /// The thread's values after the run.
    pub(crate) values: Value,
    /// Task id → the interrupts it waits on.
    pub(crate) interrupts: Map<String, Value>,
    /// The thread's status after the run, unless more runs wait for it.
    pub(crate) thread_status: &'static str,
    /// The run's error, `null` unless it failed.
    pub(crate) error: Value,
    /// What `wait` and `join` answer: the values (with `__interrupt__`), or `{"__error__"}`.
    pub(crate) output: Value,
}

/// Runs the graph, handing each API event to `push`, until it ends or `stop` resolves; then
/// calls the hooks' `after_run`.
pub(crate) async fn drive(
    graph: &dyn ServedGraph,
    context: RunContext,
    plan: Plan,
    attempt: u32,
    push: &mut (dyn FnMut(String, Value) + Send),
    stop: impl Future<Output = Stop>,
) -> Outcome {
    push("metadata".into(), json!({ "run_id": context.run_id, "attempt": attempt }));
    let mut stream = graph.run(context.clone(), plan.input, plan.config, plan.modes.engine());
    let mut translator = Translator::new(plan.modes);
    let mut stop = pin!(stop);
    let outcome = loop {
        match select(stream.next(), stop.as_mut()).await {
            Either::Left((Some(Ok(event)), _)) => {
                for (name, data) in translator.translate(event, &now()) {
                    push(name, data);
                }
            }
            Either::Left((Some(Err(e)), _)) => break fail(push, &chain(&e), kind_of(&e)),
            Either::Left((None, _)) => break Outcome::Done,
            Either::Right((how, _)) => break Outcome::Stopped(how),
        }
    };
    // The graph's stream is dropped before the hooks run: a stopped run does no more work.
    drop(stream);
    let end = match &outcome {
        Outcome::Done => RunEnd::Success,
        Outcome::Failed(e) => {
            RunEnd::Error(e.get("message").and_then(Value::as_str).unwrap_or_default().to_owned())
        }
        Outcome::Stopped(_) => RunEnd::Cancelled,
    };
    graph.after_run(&context, &end).await;
    outcome
}

/// What `outcome` leaves on the thread: a rolled-back run's checkpoints are deleted first, then
/// the thread's state is read back.
pub(crate) async fn settle(
    graph: Option<&dyn ServedGraph>,
    saver: &dyn DynCheckpointer,
    thread_id: &str,
    run_id: &str,
    outcome: &Outcome,
) -> Settled {
    if let Outcome::Stopped(Stop::Rollback) = outcome {
        if let Err(e) = saver.delete_for_runs(&[run_id.to_owned()]).await {
            tracing::warn!(run_id = %run_id, error = %e, "rolling back a run's checkpoints failed");
        }
    }
    let state = match graph {
        Some(g) => g.state(RunConfig::thread(thread_id)).await.ok().flatten(),
        None => None,
    };
    let (values, interrupts, waiting) = match &state {
        Some(s) => thread_view(s),
        None => (Value::Null, Map::new(), false),
    };
    let (output, error) = match outcome {
        Outcome::Failed(e) => (json!({ "__error__": e }), e.clone()),
        _ => (with_interrupts(&values, &interrupts), Value::Null),
    };
    let thread_status = match (outcome, waiting) {
        (Outcome::Failed(_), _) => "error",
        (_, true) => "interrupted",
        _ => "idle",
    };
    Settled { values, interrupts, thread_status, error, output }
}

/// Whether the thread has a checkpoint written by `run_id`: a run taken over from a worker that
/// died resumes from there instead of starting over.
#[cfg(feature = "mysql")]
pub(crate) async fn checkpointed(
    graph: &dyn ServedGraph,
    thread_id: &str,
    run_id: &str,
) -> crate::Result<bool> {
    let filter = Map::from_iter([("run_id".to_owned(), Value::from(run_id))]);
    let found = graph
        .history(
            RunConfig::thread(thread_id),
            mnemograph_core::checkpoint::ListOptions::new().filter(filter).limit(1),
        )
        .await?;
    Ok(!found.is_empty())
}

/// An error and its sources, joined by `: ` (a node's error is the source of the engine's).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let more = s.to_string();
        if !text.ends_with(&more) {
            text = format!("{text}: {more}");
        }
        source = s.source();
    }
    text
}

/// Records a failure as the run's `error` event.
pub(crate) fn fail(push: &mut (dyn FnMut(String, Value) + Send), message: &str, kind: &str) -> Outcome {
    let error = json!({ "error": kind, "message": message });
    push("error".into(), error.clone());
    Outcome::Failed(error)
}

/// A short name for an error's kind, as the API's `error` field carries an exception's class.
fn kind_of(e: &dyn std::fmt::Debug) -> &'static str {
    let text = format!("{e:?}");
    const KINDS: [&str; 8] = [
        "Node",
        "RecursionLimit",
        "InvalidUpdate",
        "Checkpoint",
        "Value",
        "InvalidGraph",
        "Unprocessable",
        "Graph",
    ];
    KINDS.iter().find(|k| text.starts_with(*k)).copied().unwrap_or("Error")
}

/// The thread's values, its interrupts by task, and whether it waits on an interrupt or a
/// breakpoint.
fn thread_view(state: &Value) -> (Value, Map<String, Value>, bool) {
    let values = state.get("values").cloned().unwrap_or(Value::Null);
    let mut interrupts = Map::new();
    for task in state.get("tasks").and_then(Value::as_array).into_iter().flatten() {
        let list = task.get("interrupts").and_then(Value::as_array).cloned().unwrap_or_default();
        if let (false, Some(id)) = (list.is_empty(), task.get("id").and_then(Value::as_str)) {
            interrupts.insert(id.to_owned(), Value::Array(list));
        }
    }
    let waiting = state.get("next").and_then(Value::as_array).is_some_and(|n| !n.is_empty());
    (values, interrupts, waiting)
}

/// The values plus `__interrupt__` when the thread waits on interrupts, as `wait` answers.
pub(crate) fn with_interrupts(values: &Value, interrupts: &Map<String, Value>) -> Value {
    let list: Vec<Value> = interrupts.values().filter_map(Value::as_array).flatten().cloned().collect();
    match values {
        Value::Object(map) if !list.is_empty() => {
            let mut map = map.clone();
            map.insert("__interrupt__".into(), Value::Array(list));
            Value::Object(map)
        }
        other => other.clone(),
    }
}
