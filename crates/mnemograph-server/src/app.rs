//! [`App`]: the registered graphs, the saver, and the tables of threads and runs, with the rules
//! that tie them together (one run at a time per thread, the multitask strategies, cleanup).

use std::collections::HashMap;
use std::pin::pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::future::{select, Either};
use futures_util::StreamExt;
use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::store::DynStore;
use mnemograph_core::RunConfig;
use serde_json::{json, Map, Value};
use uuid::Uuid;

use crate::assistant::Assistant;
use crate::error::{Result, ServerError};
use crate::events::Translator;
use crate::hooks::{RunContext, RunEnd};
use crate::records::{now, RunRecord, ThreadRecord};
use crate::request::{Multitask, RunCreate};
use crate::run::{Plan, RunHandle, Stop};

/// The server's state, shared by every request.
pub(crate) struct App {
    pub(crate) assistants: Vec<Assistant>,
    pub(crate) saver: Arc<dyn DynCheckpointer>,
    pub(crate) store: Arc<dyn DynStore>,
    /// How long a finished run's events stay readable (join stream, reconnection).
    event_retention: Duration,
    tables: Mutex<Tables>,
}

#[derive(Default)]
struct Tables {
    threads: HashMap<String, ThreadRecord>,
    runs: HashMap<String, Arc<RunHandle>>,
    /// Threads created for a stateless run, deleted when it ends.
    temporary: std::collections::HashSet<String>,
}

/// How a run ended.
enum Outcome {
    Done,
    Failed(Value),
    Stopped(Stop),
}

impl App {
    pub(crate) fn new(
        assistants: Vec<Assistant>,
        saver: Arc<dyn DynCheckpointer>,
        store: Arc<dyn DynStore>,
        event_retention: Duration,
    ) -> Self {
        Self { assistants, saver, store, event_retention, tables: Mutex::new(Tables::default()) }
    }

    fn tables(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The assistant with this id, or the system assistant of the graph with this id.
    pub(crate) fn assistant(&self, id: &str) -> Result<&Assistant> {
        if let Some(a) = self.assistants.iter().find(|a| a.assistant_id == id || a.graph_id == id) {
            return Ok(a);
        }
        if Uuid::parse_str(id).is_ok() {
            return Err(ServerError::NotFound(format!("Assistant '{id}' not found")));
        }
        let graphs: Vec<&str> = self.assistants.iter().map(|a| a.graph_id.as_str()).collect();
        Err(ServerError::Unprocessable(format!(
            "Invalid assistant: '{id}'. Must be either:\n- A valid assistant UUID, or\n- One of the registered graphs: {}",
            graphs.join(", ")
        )))
    }

    /// The assistant whose graph a thread ran, if it ran one.
    pub(crate) fn thread_assistant(&self, thread: &ThreadRecord) -> Option<&Assistant> {
        let graph_id = thread.metadata.get("graph_id")?.as_str()?;
        self.assistants.iter().find(|a| a.graph_id == graph_id)
    }

    pub(crate) fn thread(&self, thread_id: &str) -> Result<ThreadRecord> {
        self.tables().threads.get(thread_id).cloned().ok_or_else(|| thread_not_found(thread_id))
    }

    /// Every thread, for search.
    pub(crate) fn threads(&self) -> Vec<ThreadRecord> {
        self.tables().threads.values().cloned().collect()
    }

    /// Creates a thread; an existing id is an error unless `if_exists` is `do_nothing`.
    pub(crate) fn create_thread(
        &self,
        thread_id: Option<String>,
        metadata: Map<String, Value>,
        if_exists: Option<&str>,
    ) -> Result<ThreadRecord> {
        let thread_id = match thread_id {
            Some(id) => {
                Uuid::parse_str(&id)
                    .map_err(|e| ServerError::BadRequest(format!("invalid thread_id: {e}")))?;
                id
            }
            None => Uuid::now_v7().to_string(),
        };
        let mut tables = self.tables();
        if let Some(existing) = tables.threads.get(&thread_id) {
            return match if_exists.unwrap_or("raise") {
                "do_nothing" => Ok(existing.clone()),
                "raise" => Err(ServerError::Conflict(format!("Thread with ID {thread_id} already exists"))),
                other => Err(ServerError::Unprocessable(format!("unknown if_exists `{other}`"))),
            };
        }
        let record = ThreadRecord::new(thread_id.clone(), metadata);
        tables.threads.insert(thread_id, record.clone());
        Ok(record)
    }

    /// Merges `metadata` into a thread's.
    pub(crate) fn patch_thread(&self, thread_id: &str, metadata: Map<String, Value>) -> Result<ThreadRecord> {
        let mut tables = self.tables();
        let thread = tables.threads.get_mut(thread_id).ok_or_else(|| thread_not_found(thread_id))?;
        thread.metadata.extend(metadata);
        thread.updated_at = now();
        Ok(thread.clone())
    }

    /// Stops a thread's runs and deletes it with its checkpoints and runs.
    pub(crate) async fn delete_thread(&self, thread_id: &str) -> Result<()> {
        let runs: Vec<Arc<RunHandle>> = {
            let mut tables = self.tables();
            tables.threads.remove(thread_id).ok_or_else(|| thread_not_found(thread_id))?;
            tables.temporary.remove(thread_id);
            let ids: Vec<String> = tables
                .runs
                .iter()
                .filter(|(_, r)| r.record().thread_id == thread_id)
                .map(|(k, _)| k.clone())
                .collect();
            ids.iter().filter_map(|id| tables.runs.remove(id)).collect()
        };
        for run in &runs {
            run.request_stop(Stop::Interrupt);
        }
        for run in &runs {
            run.wait().await;
        }
        self.saver.delete_thread(thread_id).await.map_err(mnemograph_core::Error::from)?;
        Ok(())
    }

    /// Copies a thread and its checkpoints under a new id.
    pub(crate) async fn copy_thread(&self, thread_id: &str) -> Result<ThreadRecord> {
        let source = self.thread(thread_id)?;
        let new_id = Uuid::now_v7().to_string();
        self.saver.copy_thread(thread_id, &new_id).await.map_err(mnemograph_core::Error::from)?;
        let mut copy = ThreadRecord::new(new_id.clone(), source.metadata.clone());
        copy.values = source.values.clone();
        copy.interrupts = source.interrupts.clone();
        copy.status = if source.status == "busy" { "idle" } else { source.status };
        self.tables().threads.insert(new_id, copy.clone());
        Ok(copy)
    }

    /// The runs of a thread, newest first.
    pub(crate) fn runs_of(&self, thread_id: &str) -> Result<Vec<RunRecord>> {
        let tables = self.tables();
        if !tables.threads.contains_key(thread_id) {
            return Err(thread_not_found(thread_id));
        }
        let mut runs: Vec<RunRecord> =
            tables.runs.values().map(|r| r.record()).filter(|r| r.thread_id == thread_id).collect();
        runs.sort_by(|a, b| b.run_id.cmp(&a.run_id));
        Ok(runs)
    }

    /// A run of a thread.
    pub(crate) fn run(&self, thread_id: &str, run_id: &str) -> Result<Arc<RunHandle>> {
        let tables = self.tables();
        tables
            .runs
            .get(run_id)
            .filter(|r| r.record().thread_id == thread_id)
            .cloned()
            .ok_or_else(|| ServerError::NotFound(format!("Run with ID {run_id} not found")))
    }

    /// Deletes a finished run's record.
    pub(crate) fn delete_run(&self, thread_id: &str, run_id: &str) -> Result<()> {
        let run = self.run(thread_id, run_id)?;
        if !run.record().is_finished() {
            return Err(ServerError::Conflict(format!("Run {run_id} is still in progress; cancel it first")));
        }
        self.tables().runs.remove(run_id);
        Ok(())
    }

    /// Creates a run on `thread_id` (a new temporary thread when `None`) and starts it, queues it
    /// or refuses it, by the thread's state and the request's `multitask_strategy`.
    pub(crate) fn create_run(
        self: &Arc<Self>,
        thread_id: Option<&str>,
        body: &RunCreate,
    ) -> Result<Arc<RunHandle>> {
        let assistant = self.assistant(&body.assistant_id)?;
        let modes = body.modes()?;
        let input = body.run_input(&assistant.graph.nodes())?;
        let strategy = Multitask::parse(body.multitask_strategy.as_deref())?;
        let run_id = Uuid::now_v7().to_string();
        let mut tables = self.tables();
        let thread_id = match thread_id {
            Some(id) => {
                if !tables.threads.contains_key(id) {
                    if body.if_not_exists.as_deref() != Some("create") {
                        return Err(thread_not_found(id));
                    }
                    Uuid::parse_str(id)
                        .map_err(|e| ServerError::BadRequest(format!("invalid thread_id: {e}")))?;
                    tables.threads.insert(id.to_owned(), ThreadRecord::new(id.to_owned(), Map::new()));
                }
                id.to_owned()
            }
            None => {
                let id = Uuid::now_v7().to_string();
                tables.threads.insert(id.clone(), ThreadRecord::new(id.clone(), Map::new()));
                if body.on_completion.as_deref().unwrap_or("delete") == "delete" {
                    tables.temporary.insert(id.clone());
                }
                id
            }
        };
        let thread = tables.threads.get_mut(&thread_id).ok_or_else(|| thread_not_found(&thread_id))?;
        if thread.is_busy() && strategy == Multitask::Reject {
            return Err(ServerError::Conflict(
                "Thread is already running a task. Wait for it to finish or choose a different multitask strategy."
                    .into(),
            ));
        }
        thread.metadata.insert("graph_id".into(), assistant.graph_id.clone().into());
        thread.metadata.insert("assistant_id".into(), assistant.assistant_id.clone().into());
        let mut metadata = thread.metadata.clone();
        metadata.extend(body.metadata.clone().unwrap_or_default());
        metadata.insert("run_id".into(), run_id.clone().into());
        let config = body.run_config(&thread_id, &metadata, &assistant.graph.nodes())?;
        let kwargs = json!({
            "input": body.input,
            "command": body.command.as_ref().map(|c| json!({"resume": c.resume, "goto": c.goto, "update": c.update})),
            "config": { "configurable": { "thread_id": thread_id, "run_id": run_id } },
            "stream_mode": modes.names(),
            "interrupt_before": body.interrupt_before,
            "interrupt_after": body.interrupt_after,
        });
        let record = RunRecord {
            run_id: run_id.clone(),
            thread_id: thread_id.clone(),
            assistant_id: assistant.assistant_id.clone(),
            metadata: body.metadata.clone().unwrap_or_default(),
            status: "pending",
            kwargs,
            multitask_strategy: strategy.name().to_owned(),
            created_at: now(),
            updated_at: now(),
        };
        let run = Arc::new(RunHandle::new(record, Plan { input, config, modes }));
        let start_now = if thread.is_busy() {
            if matches!(strategy, Multitask::Interrupt | Multitask::Rollback) {
                let how = if strategy == Multitask::Rollback { Stop::Rollback } else { Stop::Interrupt };
                let waiting: Vec<String> = thread.queue.drain(..).chain(thread.active.clone()).collect();
                for id in waiting {
                    if let Some(r) = tables.runs.get(&id) {
                        r.request_stop(how);
                    }
                }
            }
            let thread = tables.threads.get_mut(&thread_id).ok_or_else(|| thread_not_found(&thread_id))?;
            thread.queue.push_back(run_id.clone());
            false
        } else {
            thread.active = Some(run_id.clone());
            thread.status = "busy";
            true
        };
        tables.runs.insert(run_id, run.clone());
        drop(tables);
        if start_now {
            self.spawn(run.clone());
        }
        Ok(run)
    }

    /// Asks a run to stop.
    pub(crate) fn cancel(&self, thread_id: &str, run_id: &str, how: Stop) -> Result<Arc<RunHandle>> {
        let run = self.run(thread_id, run_id)?;
        if !run.record().is_finished() {
            run.request_stop(how);
            // A queued run never starts: take it off the queue and settle it here.
            let queued = {
                let mut tables = self.tables();
                let thread = tables.threads.get_mut(thread_id);
                match thread {
                    Some(t) if t.queue.contains(&run_id.to_owned()) => {
                        t.queue.retain(|id| id != run_id);
                        true
                    }
                    _ => false,
                }
            };
            if queued {
                run.take_plan();
                self.settle_unstarted(&run, how);
            }
        }
        Ok(run)
    }

    fn settle_unstarted(&self, run: &RunHandle, how: Stop) {
        run.set_status("interrupted");
        if how == Stop::Rollback {
            self.tables().runs.remove(&run.run_id());
        }
        run.finish();
    }

    fn spawn(self: &Arc<Self>, run: Arc<RunHandle>) {
        let app = self.clone();
        tokio::spawn(async move { app.execute(run).await });
    }

    async fn execute(self: Arc<Self>, run: Arc<RunHandle>) {
        let Some(plan) = run.take_plan() else { return };
        let record = run.record();
        let context = context_of(&record, &plan);
        let outcome = match run.stop_requested() {
            Some(how) => Outcome::Stopped(how),
            None => {
                let outcome = self.drive(&run, &record, plan, context.clone()).await;
                if let Ok(a) = self.assistant(&record.assistant_id) {
                    let end = match &outcome {
                        Outcome::Done => RunEnd::Success,
                        Outcome::Failed(e) => RunEnd::Error(
                            e.get("message").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        ),
                        Outcome::Stopped(_) => RunEnd::Cancelled,
                    };
                    a.graph.after_run(&context, &end).await;
                }
                outcome
            }
        };
        self.finish(&run, &record, outcome).await;
    }

    /// Runs the graph, recording its events, until it ends or is asked to stop.
    async fn drive(&self, run: &RunHandle, record: &RunRecord, plan: Plan, context: RunContext) -> Outcome {
        run.set_status("running");
        run.push("metadata".into(), json!({ "run_id": record.run_id, "attempt": 1 }));
        let graph = match self.assistant(&record.assistant_id) {
            Ok(a) => a.graph.clone(),
            Err(e) => return fail(run, &e.to_string(), "NotFound"),
        };
        let mut stream = graph.run(context, plan.input, plan.config, plan.modes.engine());
        let mut translator = Translator::new(plan.modes);
        let mut stop = run.stop_signal();
        loop {
            let stopped = pin!(stop.wait_for(Option::is_some));
            match select(stream.next(), stopped).await {
                Either::Left((Some(Ok(event)), _)) => {
                    for (name, data) in translator.translate(event, &now()) {
                        run.push(name, data);
                    }
                }
                Either::Left((Some(Err(e)), _)) => return fail(run, &chain(&e), kind_of(&e)),
                Either::Left((None, _)) => return Outcome::Done,
                Either::Right(_) => return Outcome::Stopped(run.stop_requested().unwrap_or(Stop::Interrupt)),
            }
        }
    }

    /// Settles a run that ended: its status, its thread's state, its output; then starts the
    /// thread's next queued run.
    async fn finish(self: &Arc<Self>, run: &Arc<RunHandle>, record: &RunRecord, outcome: Outcome) {
        let thread_id = &record.thread_id;
        let (status, error) = match &outcome {
            Outcome::Done => ("success", Value::Null),
            Outcome::Failed(e) => ("error", e.clone()),
            Outcome::Stopped(_) => ("interrupted", Value::Null),
        };
        if let Outcome::Stopped(Stop::Rollback) = outcome {
            if let Err(e) = self.saver.delete_for_runs(std::slice::from_ref(&record.run_id)).await {
                tracing::warn!(run_id = %record.run_id, error = %e, "rolling back a run's checkpoints failed");
            }
        }
        let state = match self.assistant(&record.assistant_id) {
            Ok(a) => a.graph.state(RunConfig::thread(thread_id.as_str())).await.ok().flatten(),
            Err(_) => None,
        };
        let (values, interrupts, waiting) = match &state {
            Some(s) => thread_view(s),
            None => (Value::Null, Map::new(), false),
        };
        let output = match &outcome {
            Outcome::Failed(e) => json!({ "__error__": e }),
            _ => with_interrupts(&values, &interrupts),
        };
        run.set_output(output);
        run.set_status(status);
        let next = {
            let mut tables = self.tables();
            if let Outcome::Stopped(Stop::Rollback) = outcome {
                tables.runs.remove(&record.run_id);
            }
            let temporary = tables.temporary.contains(thread_id);
            let mut next = None;
            if let Some(thread) = tables.threads.get_mut(thread_id) {
                thread.values = values;
                thread.interrupts = interrupts;
                thread.error = error.clone();
                thread.updated_at = now();
                thread.status = match (&outcome, waiting) {
                    (Outcome::Failed(_), _) => "error",
                    (_, true) => "interrupted",
                    _ => "idle",
                };
                if thread.active.as_deref() == Some(record.run_id.as_str()) {
                    thread.active = None;
                }
                if thread.active.is_none() {
                    if let Some(id) = thread.queue.pop_front() {
                        thread.active = Some(id.clone());
                        thread.status = "busy";
                        next = tables.runs.get(&id).cloned();
                    }
                }
            }
            if temporary && next.is_none() {
                tables.temporary.remove(thread_id);
                tables.threads.remove(thread_id);
                tables.runs.remove(&record.run_id);
                Some(None)
            } else {
                next.map(Some)
            }
        };
        run.finish();
        let (kept, retention) = (run.clone(), self.event_retention);
        tokio::spawn(async move {
            tokio::time::sleep(retention).await;
            kept.forget_events();
        });
        match next {
            Some(Some(next)) => self.spawn(next),
            Some(None) => {
                if let Err(e) = self.saver.delete_thread(thread_id).await {
                    tracing::warn!(thread_id = %thread_id, error = %e, "deleting a stateless run's thread failed");
                }
            }
            None => {}
        }
    }
}

fn thread_not_found(id: &str) -> ServerError {
    ServerError::NotFound(format!("Thread with ID {id} not found"))
}

/// What hooks learn of a run.
fn context_of(record: &RunRecord, plan: &Plan) -> RunContext {
    RunContext {
        thread_id: record.thread_id.clone(),
        run_id: record.run_id.clone(),
        metadata: plan.config.metadata.clone(),
    }
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
fn fail(run: &RunHandle, message: &str, kind: &str) -> Outcome {
    let error = json!({ "error": kind, "message": message });
    run.push("error".into(), error.clone());
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
