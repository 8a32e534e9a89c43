//! [`App`]: the registered graphs, the saver, and the tables of threads and runs, with the rules
//! that tie them together (one run at a time per thread, the multitask strategies, cleanup).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::store::DynStore;
use serde_json::{Map, Value};
use tokio::time::Instant;
use uuid::Uuid;

use crate::assistant::Assistant;
use crate::auth::{Grant, Identity};
use crate::error::{Result, ServerError};
use crate::exec::{self, Outcome};
use crate::handle::RunRef;
use crate::hooks::RunContext;
use crate::limits::Limits;
use crate::records::{now, stamp_before, RunRecord, ThreadRecord, ThreadSearch};
use crate::request::{Multitask, RunCreate};
use crate::retention::Retention;
use crate::run::{Plan, RunHandle, Stop};
use crate::served::ServedGraph;
use crate::streams::Streams;
use crate::thread_table::ThreadTable;

/// The server's state, shared by every request.
pub(crate) struct App {
    pub(crate) assistants: Vec<Assistant>,
    pub(crate) saver: Arc<dyn DynCheckpointer>,
    pub(crate) store: Arc<dyn DynStore>,
    /// How long a finished run's events stay readable (join stream, reconnection).
    event_retention: Duration,
    /// What one request may ask: pages, recursion, waiting runs.
    pub(crate) limits: Limits,
    /// How long finished runs and idle threads stay, and how many events a run keeps.
    pub(crate) retention: Retention,
    /// The event streams each caller has open.
    pub(crate) streams: Streams,
    tables: Mutex<Tables>,
    /// Where thread and run records live when several processes serve the same threads; in this
    /// process when `None`.
    #[cfg(feature = "cluster")]
    pub(crate) cluster: Option<Arc<crate::cluster::Ledger>>,
}

#[derive(Default)]
struct Tables {
    threads: ThreadTable,
    runs: HashMap<String, Arc<RunHandle>>,
    /// Threads created for a stateless run, deleted when it ends.
    temporary: std::collections::HashSet<String>,
}

/// Hands the call to the cluster's ledger when the server has one.
macro_rules! in_cluster {
    ($app:expr, |$c:ident| $call:expr) => {
        #[cfg(feature = "cluster")]
        if let Some($c) = &$app.cluster {
            return $call;
        }
    };
}

impl App {
    pub(crate) fn new(
        assistants: Vec<Assistant>,
        saver: Arc<dyn DynCheckpointer>,
        store: Arc<dyn DynStore>,
        event_retention: Duration,
    ) -> Self {
        Self {
            assistants,
            saver,
            store,
            event_retention,
            limits: Limits::default(),
            retention: Retention::default(),
            streams: Streams::new(Limits::DEFAULT_MAX_STREAMS_PER_USER),
            tables: Mutex::new(Tables::default()),
            #[cfg(feature = "cluster")]
            cluster: None,
        }
    }

    /// Keeps finished runs, idle threads and run events as `retention` says.
    pub(crate) fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
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

    /// A thread `grant` reaches; one it does not is not found, as one that does not exist.
    pub(crate) async fn thread(&self, thread_id: &str, grant: &Grant) -> Result<ThreadRecord> {
        in_cluster!(self, |c| c.thread(thread_id, grant).await);
        self.tables()
            .threads
            .get(thread_id)
            .filter(|t| grant.admits(&t.metadata))
            .cloned()
            .ok_or_else(|| thread_not_found(thread_id))
    }

    /// The threads a search asks for, newest first.
    pub(crate) async fn search_threads(&self, q: &ThreadSearch) -> Result<Vec<ThreadRecord>> {
        in_cluster!(self, |c| c.search_threads(q).await);
        Ok(self.tables().threads.search(q))
    }

    /// How many threads a search finds.
    pub(crate) async fn count_threads(&self, q: &ThreadSearch) -> Result<usize> {
        in_cluster!(self, |c| c.count_threads(q).await);
        Ok(self.tables().threads.count(q))
    }

    /// Creates a thread, its metadata stamped with `grant`'s; an existing id is an error unless
    /// `if_exists` is `do_nothing` and `grant` reaches the thread.
    pub(crate) async fn create_thread(
        &self,
        thread_id: Option<String>,
        mut metadata: Map<String, Value>,
        if_exists: Option<&str>,
        grant: &Grant,
    ) -> Result<ThreadRecord> {
        let thread_id = new_thread_id(thread_id)?;
        let if_exists = if_exists.unwrap_or("raise");
        if !matches!(if_exists, "raise" | "do_nothing") {
            return Err(ServerError::Unprocessable(format!("unknown if_exists `{if_exists}`")));
        }
        grant.stamp(&mut metadata);
        let record = ThreadRecord::new(thread_id.clone(), metadata);
        in_cluster!(self, |c| c.create_thread(record, if_exists == "do_nothing", grant).await);
        let mut tables = self.tables();
        if let Some(existing) = tables.threads.get(&thread_id) {
            return match if_exists {
                "do_nothing" if grant.admits(&existing.metadata) => Ok(existing.clone()),
                _ => Err(thread_exists(&thread_id)),
            };
        }
        tables.threads.insert(thread_id, record.clone());
        Ok(record)
    }

    /// Merges `metadata` into a thread's, then stamps `grant`'s over it.
    pub(crate) async fn patch_thread(
        &self,
        thread_id: &str,
        metadata: Map<String, Value>,
        grant: &Grant,
    ) -> Result<ThreadRecord> {
        in_cluster!(self, |c| c.patch_thread(thread_id, metadata, grant).await);
        let mut tables = self.tables();
        let thread = tables
            .threads
            .get_mut(thread_id)
            .filter(|t| grant.admits(&t.metadata))
            .ok_or_else(|| thread_not_found(thread_id))?;
        thread.metadata.extend(metadata);
        grant.stamp(&mut thread.metadata);
        thread.updated_at = now();
        Ok(thread.clone())
    }

    /// Stops a thread's runs and deletes it with its checkpoints and runs.
    pub(crate) async fn delete_thread(&self, thread_id: &str, grant: &Grant) -> Result<()> {
        in_cluster!(self, |c| c.delete_thread(thread_id, grant, &*self.saver).await);
        let runs: Vec<Arc<RunHandle>> = {
            let mut tables = self.tables();
            if !tables.threads.get(thread_id).is_some_and(|t| grant.admits(&t.metadata)) {
                return Err(thread_not_found(thread_id));
            }
            tables.threads.remove(thread_id);
            tables.temporary.remove(thread_id);
            let ids: Vec<String> =
                tables.runs.iter().filter(|(_, r)| r.is_on(thread_id)).map(|(k, _)| k.clone()).collect();
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

    /// Copies a thread `read` reaches and its checkpoints under a new id, stamped with
    /// `create`'s metadata.
    pub(crate) async fn copy_thread(
        &self,
        thread_id: &str,
        read: &Grant,
        create: &Grant,
    ) -> Result<ThreadRecord> {
        let source = self.thread(thread_id, read).await?;
        let new_id = Uuid::now_v7().to_string();
        self.saver.copy_thread(thread_id, &new_id).await.map_err(mnemograph_core::Error::from)?;
        let mut metadata = source.metadata.clone();
        create.stamp(&mut metadata);
        let mut copy = ThreadRecord::new(new_id.clone(), metadata);
        copy.values = source.values.clone();
        copy.interrupts = source.interrupts.clone();
        copy.status = if source.status == "busy" { "idle" } else { source.status };
        in_cluster!(self, |c| c.insert_thread(copy).await);
        self.tables().threads.insert(new_id, copy.clone());
        Ok(copy)
    }

    /// The runs of a thread `grant` reaches, newest first.
    pub(crate) async fn runs_of(&self, thread_id: &str, grant: &Grant) -> Result<Vec<RunRecord>> {
        in_cluster!(self, |c| c.runs_of(thread_id, grant).await);
        let tables = self.tables();
        if !tables.threads.get(thread_id).is_some_and(|t| grant.admits(&t.metadata)) {
            return Err(thread_not_found(thread_id));
        }
        let now = Instant::now();
        let mut runs: Vec<RunRecord> = tables
            .runs
            .values()
            .filter(|r| r.is_on(thread_id) && !self.run_expired(r, now))
            .map(|r| r.record())
            .collect();
        runs.sort_by(|a, b| b.run_id.cmp(&a.run_id));
        Ok(runs)
    }

    /// A run of a thread `grant` reaches.
    pub(crate) async fn run(&self, thread_id: &str, run_id: &str, grant: &Grant) -> Result<RunRef> {
        in_cluster!(self, |c| c.run(thread_id, run_id, grant).await.map(|r| RunRef::Remote(Box::new(r))));
        self.local_run(thread_id, run_id, grant).map(RunRef::Local)
    }

    /// A run of this process on a thread `grant` reaches, unless it outlived its retention (then
    /// it is dropped at once, and is not found as a run that never was); its events are forgotten
    /// past theirs.
    fn local_run(&self, thread_id: &str, run_id: &str, grant: &Grant) -> Result<Arc<RunHandle>> {
        let mut tables = self.tables();
        if !tables.threads.get(thread_id).is_some_and(|t| grant.admits(&t.metadata)) {
            return Err(run_not_found(run_id));
        }
        let run = tables
            .runs
            .get(run_id)
            .filter(|r| r.is_on(thread_id))
            .cloned()
            .ok_or_else(|| run_not_found(run_id))?;
        let now = Instant::now();
        if self.run_expired(&run, now) {
            tables.runs.remove(run_id);
            return Err(run_not_found(run_id));
        }
        if run.finished_for(now).is_some_and(|age| age >= self.event_retention) {
            run.forget_events();
        }
        Ok(run)
    }

    /// Whether a run finished longer ago than the run retention.
    fn run_expired(&self, run: &RunHandle, now: Instant) -> bool {
        run.finished_for(now).is_some_and(|age| age >= self.retention.runs)
    }

    /// Frees what outlived its retention: finished runs past the run retention (record, handle
    /// and events), the events of finished runs past the event retention, and, with a thread TTL,
    /// the threads not updated within it that no run holds or waits for, with their runs and
    /// checkpoints.
    pub(crate) async fn sweep(&self) {
        #[cfg(feature = "cluster")]
        if let Some(c) = &self.cluster {
            if let Err(e) = c.sweep(&self.retention, &*self.saver).await {
                tracing::warn!(error = %e, "sweeping the cluster's expired runs and threads failed");
            }
            return;
        }
        let now = Instant::now();
        let expired_threads = {
            let mut tables = self.tables();
            tables.runs.retain(|_, run| match run.finished_for(now) {
                Some(age) if age >= self.retention.runs => false,
                Some(age) if age >= self.event_retention => {
                    run.forget_events();
                    true
                }
                _ => true,
            });
            match self.retention.thread_ttl {
                Some(ttl) => tables.expire_threads(&stamp_before(ttl)),
                None => Vec::new(),
            }
        };
        for thread_id in expired_threads {
            if let Err(e) = self.saver.delete_thread(&thread_id).await {
                tracing::warn!(thread_id = %thread_id, error = %e, "deleting an expired thread's checkpoints failed");
            }
        }
    }

    /// Deletes a finished run's record.
    pub(crate) async fn delete_run(&self, thread_id: &str, run_id: &str, grant: &Grant) -> Result<()> {
        in_cluster!(self, |c| c.delete_run(thread_id, run_id, grant).await);
        let run = self.local_run(thread_id, run_id, grant)?;
        if !run.record().is_finished() {
            return Err(run_in_progress(run_id));
        }
        self.tables().runs.remove(run_id);
        Ok(())
    }

    /// Creates a run on `thread_id` (a new temporary thread when `None`) and starts it, queues it
    /// or refuses it, by the thread's state and the request's `multitask_strategy`. The thread
    /// must be one `grant` reaches; a thread made for the run, and the run's metadata, are stamped
    /// with it. The run's nodes see `user` as `langgraph_auth_user`.
    pub(crate) async fn create_run(
        self: &Arc<Self>,
        thread_id: Option<&str>,
        body: &RunCreate,
        grant: &Grant,
        user: Option<&Identity>,
    ) -> Result<RunRef> {
        let assistant = self.assistant(&body.assistant_id)?;
        let modes = body.modes()?;
        let input = body.run_input(&assistant.graph.nodes())?;
        let strategy = Multitask::parse(body.multitask_strategy.as_deref())?;
        self.limits.check_recursion_limit(body.config.as_ref().and_then(|c| c.recursion_limit))?;
        in_cluster!(self, |c| c
            .create_run(assistant, thread_id, body, modes, strategy, &self.limits, grant, user)
            .await
            .map(|r| RunRef::Remote(Box::new(r))));
        let mut owned = Map::new();
        grant.stamp(&mut owned);
        let run_id = Uuid::now_v7().to_string();
        let mut tables = self.tables();
        let thread_id = match thread_id {
            Some(id) => {
                match tables.threads.get(id) {
                    Some(t) if !grant.admits(&t.metadata) => return Err(thread_not_found(id)),
                    Some(_) => {}
                    None if body.if_not_exists.as_deref() != Some("create") => {
                        return Err(thread_not_found(id))
                    }
                    None => {
                        new_thread_id(Some(id.to_owned()))?;
                        tables.threads.insert(id.to_owned(), ThreadRecord::new(id.to_owned(), owned));
                    }
                }
                id.to_owned()
            }
            None => {
                let id = Uuid::now_v7().to_string();
                tables.threads.insert(id.clone(), ThreadRecord::new(id.clone(), owned));
                if body.on_completion.as_deref().unwrap_or("delete") == "delete" {
                    tables.temporary.insert(id.clone());
                }
                id
            }
        };
        let thread = tables.threads.get_mut(&thread_id).ok_or_else(|| thread_not_found(&thread_id))?;
        if thread.is_busy() && strategy == Multitask::Reject {
            return Err(thread_busy());
        }
        if thread.is_busy() && strategy == Multitask::Enqueue {
            self.limits.check_queue(thread.queue.len())?;
        }
        thread.metadata.insert("graph_id".into(), assistant.graph_id.clone().into());
        thread.metadata.insert("assistant_id".into(), assistant.assistant_id.clone().into());
        let mut metadata = body.run_metadata(&thread.metadata, &run_id);
        grant.stamp(&mut metadata);
        let config = body.run_config(&thread_id, &metadata, &assistant.graph.nodes(), user)?;
        let record = body.run_record(&run_id, &thread_id, &assistant.assistant_id, modes, strategy);
        let run = Arc::new(RunHandle::new(
            record,
            Plan { input, config, modes },
            self.retention.event_log_bytes,
            self.limits.max_unread_event_bytes,
        ));
        let mut dropped = Vec::new();
        let start_now = if thread.is_busy() {
            if matches!(strategy, Multitask::Interrupt | Multitask::Rollback) {
                let how = if strategy == Multitask::Rollback { Stop::Rollback } else { Stop::Interrupt };
                let queued: Vec<String> = thread.queue.drain(..).collect();
                let active = thread.active.clone();
                for id in queued.iter().chain(active.iter()) {
                    if let Some(r) = tables.runs.get(id) {
                        r.request_stop(how);
                    }
                }
                // Queued runs never start now: they are settled below, as a cancel settles them.
                dropped =
                    queued.iter().filter_map(|id| tables.runs.get(id).cloned().map(|r| (r, how))).collect();
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
        for (old, how) in dropped {
            old.take_plan();
            self.settle_unstarted(&old, how);
        }
        if start_now {
            self.spawn(run.clone());
        }
        Ok(RunRef::Local(run))
    }

    /// Asks a run to stop.
    pub(crate) async fn cancel(
        &self,
        thread_id: &str,
        run_id: &str,
        how: Stop,
        grant: &Grant,
    ) -> Result<RunRef> {
        in_cluster!(self, |c| c
            .cancel(thread_id, run_id, how, grant)
            .await
            .map(|r| RunRef::Remote(Box::new(r))));
        let run = self.local_run(thread_id, run_id, grant)?;
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
        Ok(RunRef::Local(run))
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
        let graph = self.assistant(&record.assistant_id).ok().map(|a| a.graph.clone());
        let mut push = |name: String, data: Value| run.push(name, &data);
        let outcome = match (run.stop_requested(), &graph) {
            (Some(how), _) => Outcome::Stopped(how),
            (None, None) => {
                run.set_status("running");
                let missing = format!("Assistant '{}' not found", record.assistant_id);
                exec::fail(&mut push, &missing, "NotFound")
            }
            (None, Some(graph)) => {
                run.set_status("running");
                let mut stop = run.stop_signal();
                let stop = async move {
                    let how = stop.wait_for(Option::is_some).await.ok().and_then(|s| *s);
                    how.unwrap_or(Stop::Interrupt)
                };
                exec::drive(&**graph, context, plan, 1, &mut push, stop).await
            }
        };
        self.finish(&run, &record, outcome, graph.as_deref()).await;
    }

    /// Settles a run that ended: its status, its thread's state, its output; then starts the
    /// thread's next queued run.
    async fn finish(
        self: &Arc<Self>,
        run: &Arc<RunHandle>,
        record: &RunRecord,
        outcome: Outcome,
        graph: Option<&dyn ServedGraph>,
    ) {
        let thread_id = &record.thread_id;
        let settled = exec::settle(graph, &*self.saver, thread_id, &record.run_id, &outcome).await;
        run.set_output(settled.output.clone());
        run.set_status(settled.status);
        let next = {
            let mut tables = self.tables();
            if let Outcome::Stopped(Stop::Rollback) = outcome {
                tables.runs.remove(&record.run_id);
            }
            let temporary = tables.temporary.contains(thread_id);
            let mut next = None;
            if let Some(thread) = tables.threads.get_mut(thread_id) {
                if settled.state_known {
                    thread.values = settled.values;
                    thread.interrupts = settled.interrupts;
                }
                thread.error = settled.error;
                thread.updated_at = now();
                thread.status = settled.thread_status;
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

impl Tables {
    /// Removes the threads last updated before `cutoff` (a timestamp) that no run holds or waits
    /// for, with their runs; returns their ids. Busy threads are checked under the same lock that
    /// starts runs, so a thread that just got a run stays.
    fn expire_threads(&mut self, cutoff: &str) -> Vec<String> {
        let expired: Vec<String> = self
            .threads
            .values()
            .filter(|t| {
                !t.is_busy() && t.updated_at.as_str() < cutoff && !self.temporary.contains(&t.thread_id)
            })
            .map(|t| t.thread_id.clone())
            .collect();
        if expired.is_empty() {
            return expired;
        }
        for id in &expired {
            self.threads.remove(id);
        }
        let gone: std::collections::HashSet<&str> = expired.iter().map(String::as_str).collect();
        self.runs.retain(|_, run| !run.on_any(&gone));
        expired
    }
}

pub(crate) fn thread_not_found(id: &str) -> ServerError {
    ServerError::NotFound(format!("Thread with ID {id} not found"))
}

pub(crate) fn thread_exists(id: &str) -> ServerError {
    ServerError::Conflict(format!("Thread with ID {id} already exists"))
}

pub(crate) fn run_not_found(id: &str) -> ServerError {
    ServerError::NotFound(format!("Run with ID {id} not found"))
}

pub(crate) fn run_in_progress(id: &str) -> ServerError {
    ServerError::Conflict(format!("Run {id} is still in progress; cancel it first"))
}

pub(crate) fn thread_busy() -> ServerError {
    ServerError::Conflict(
        "Thread is already running a task. Wait for it to finish or choose a different multitask strategy."
            .into(),
    )
}

/// The id of a new thread: the one asked for, which must be a UUID, or a fresh one.
pub(crate) fn new_thread_id(asked: Option<String>) -> Result<String> {
    match asked {
        Some(id) => {
            Uuid::parse_str(&id).map_err(|e| ServerError::BadRequest(format!("invalid thread_id: {e}")))?;
            Ok(id)
        }
        None => Ok(Uuid::now_v7().to_string()),
    }
}

/// What hooks learn of a run.
fn context_of(record: &RunRecord, plan: &Plan) -> RunContext {
    RunContext::of(record.thread_id.clone(), record.run_id.clone(), &plan.config)
}
