//! Running one run of a served graph, wherever it runs: its events as the API names them, how it
//! ended, and what that leaves on its thread. The in-process server and the cluster's workers
//! both run runs through here.

use std::future::Future;
use std::pin::pin;
use std::time::Duration;

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
pub enum Outcome {
    /// Ran to its end or to an interrupt.
    Done,
    /// Failed with this error, as the run's `error` event carries it.
    Failed(Value),
    /// Stopped by a cancel.
    Stopped(Stop),
}

impl Outcome {
    /// The run's status once it ended.
    pub fn status(&self) -> &'static str {
        match self {
            Self::Done => "success",
            Self::Failed(_) => "error",
            Self::Stopped(_) => "interrupted",
        }
    }
}

/// What a run leaves on its thread and answers `wait` and `join` with.
#[derive(Debug, Clone)]
pub struct Settled {
    /// The thread's values after the run.
    pub values: Value,
    /// Task id → the interrupts it waits on.
    pub interrupts: Map<String, Value>,
    /// The thread's status after the run, unless more runs wait for it.
    pub thread_status: &'static str,
    /// The run's error, `null` unless it failed.
    pub error: Value,
    /// What `wait` and `join` answer: the values (with `__interrupt__`), or `{"__error__"}`.
    pub output: Value,
    /// The run's status: the outcome's, or `error` when the thread could not be read back.
    pub status: &'static str,
    /// Whether `values` and `interrupts` were read back; when not, the thread keeps its own.
    pub state_known: bool,
}

/// How many times reading a thread back, or deleting a rolled-back run's checkpoints, is tried.
const SETTLE_TRIES: u32 = 4;
/// The wait after the first failed try; doubled after each.
const SETTLE_BACKOFF: Duration = Duration::from_millis(100);

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
    let outcome = run(graph, context.clone(), plan, attempt, push, stop).await;
    graph.after_run(&context, &run_end(&outcome)).await;
    outcome
}

/// Runs the graph, handing each API event to `push`, until it ends or `stop` resolves; the
/// graph's stream is dropped before this returns, so a stopped run does no more work. The
/// caller calls the hooks' `after_run`, once it knows the run is its to end.
pub async fn run(
    graph: &dyn ServedGraph,
    context: RunContext,
    plan: Plan,
    attempt: u32,
    push: &mut (dyn FnMut(String, Value) + Send),
    stop: impl Future<Output = Stop>,
) -> Outcome {
    push("metadata".into(), json!({ "run_id": context.run_id, "attempt": attempt }));
    let mut stream = graph.run(context, plan.input, plan.config, plan.modes.engine());
    let mut translator = Translator::new(plan.modes);
    let mut stop = pin!(stop);
    loop {
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
    }
}

/// How a run ended, as the hooks' `after_run` learns it.
pub fn run_end(outcome: &Outcome) -> RunEnd {
    match outcome {
        Outcome::Done => RunEnd::Success,
        Outcome::Failed(e) => {
            RunEnd::Error(e.get("message").and_then(Value::as_str).unwrap_or_default().to_owned())
        }
        Outcome::Stopped(_) => RunEnd::Cancelled,
    }
}

/// What `outcome` leaves on the thread: a rolled-back run's checkpoints are deleted first, then
/// the thread's state is read back. Both are tried again after a failure; a state that still
/// cannot be read makes the run fail with an error that says so, and leaves the thread's values
/// and interrupts as they were (`state_known` is false).
pub async fn settle(
    graph: Option<&dyn ServedGraph>,
    saver: &dyn DynCheckpointer,
    thread_id: &str,
    run_id: &str,
    outcome: &Outcome,
) -> Settled {
    if let Outcome::Stopped(Stop::Rollback) = outcome {
        let run_ids = [run_id.to_owned()];
        if let Err(e) =
            retried("rolling back a run's checkpoints", run_id, || saver.delete_for_runs(&run_ids)).await
        {
            tracing::error!(run_id = %run_id, error = %e, "rolling back a run's checkpoints failed; they stay on the thread");
        }
    }
    let state = match graph {
        Some(g) => retried("reading a thread's state back", run_id, || g.state(RunConfig::thread(thread_id)))
            .await
            .map(|s| (true, s)),
        None => Ok((false, None)),
    };
    let (state_known, state, unread) = match state {
        Ok((known, state)) => (known, state, None),
        Err(e) => (false, None, Some(e.to_string())),
    };
    let (values, interrupts, waiting) = match &state {
        Some(s) => thread_view(s),
        None => (Value::Null, Map::new(), false),
    };
    let failure = match (outcome, unread) {
        (Outcome::Failed(e), _) => Some(e.clone()),
        (_, Some(why)) => Some(json!({
            "error": "StateUnavailable",
            "message": format!("the run ended but its thread's state could not be read back: {why}"),
        })),
        _ => None,
    };
    let (output, error, status) = match &failure {
        Some(e) => (json!({ "__error__": e }), e.clone(), "error"),
        None => (with_interrupts(&values, &interrupts), Value::Null, outcome.status()),
    };
    let thread_status = match (&failure, waiting) {
        (Some(_), _) => "error",
        (_, true) => "interrupted",
        _ => "idle",
    };
    Settled { values, interrupts, thread_status, error, output, status, state_known }
}

/// `call`'s answer, tried again after a failure, waiting longer each time.
async fn retried<T, E: std::fmt::Display, F: Future<Output = Result<T, E>>>(
    what: &str,
    run_id: &str,
    mut call: impl FnMut() -> F,
) -> Result<T, E> {
    let mut backoff = SETTLE_BACKOFF;
    let mut tries = 1;
    loop {
        match call().await {
            Err(e) if tries < SETTLE_TRIES => {
                tracing::warn!(run_id = %run_id, error = %e, "{what} failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff *= 2;
                tries += 1;
            }
            done => return done,
        }
    }
}

/// Whether the thread has a checkpoint written by `run_id`: a run taken over from a worker that
/// died resumes from there instead of starting over.
pub async fn checkpointed(graph: &dyn ServedGraph, thread_id: &str, run_id: &str) -> crate::Result<bool> {
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
pub fn fail(push: &mut (dyn FnMut(String, Value) + Send), message: &str, kind: &str) -> Outcome {
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
