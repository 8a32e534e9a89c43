//! How [`LocalRecords`](super::LocalRecords) runs a run: created against its thread's state and
//! the multitask strategy, started, queued or settled unstarted, run, and settled when it ends,
//! starting the thread's next queued run.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::time::Instant;
use uuid::Uuid;

use super::Local;
use crate::auth::Grant;
use crate::error::{thread_busy, thread_not_found, Result};
use crate::exec::{self, Outcome};
use crate::hooks::RunContext;
use crate::keeper::NewRun;
use crate::records::{new_thread_id, now, stamp_after, RunRecord, ThreadRecord};
use crate::request::Multitask;
use crate::run::{Plan, RunHandle, Stop};
use crate::served::ServedGraph;
use crate::webhook::{webhook_of, FinalRecord};

impl Local {
    /// Creates a run on its thread (a new temporary thread when none is named) and starts it,
    /// queues it or refuses it, by the thread's state and the request's `multitask_strategy`.
    pub(super) fn create_run(self: &Arc<Self>, new: NewRun<'_>) -> Result<Arc<RunHandle>> {
        let NewRun {
            graph,
            assistant,
            thread_id,
            body,
            modes,
            options,
            input,
            strategy,
            limits,
            grant,
            user,
        } = new;
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
                if options.delete_on_completion {
                    tables.temporary.insert(id.clone());
                }
                id
            }
        };
        let temporary = tables.temporary.contains(&thread_id);
        let thread = tables.threads.get_mut(&thread_id).ok_or_else(|| thread_not_found(&thread_id))?;
        if thread.is_busy() && strategy == Multitask::Reject {
            return Err(thread_busy());
        }
        if thread.is_busy() && strategy == Multitask::Enqueue {
            limits.check_queue(thread.queue.len())?;
        }
        thread.metadata.insert("graph_id".into(), graph.graph_id.clone().into());
        thread.metadata.insert("assistant_id".into(), assistant.assistant_id.clone().into());
        let mut metadata = body.run_metadata(assistant, &thread.metadata);
        grant.stamp(&mut metadata);
        let mut record =
            body.run_record(&run_id, &thread_id, &assistant.assistant_id, metadata.clone(), modes, strategy);
        record.kwargs["temporary"] = temporary.into();
        metadata.insert("run_id".into(), run_id.clone().into());
        let config = body.run_config(&thread_id, &metadata, &graph.graph.nodes(), user)?;
        let delayed = !options.delay.is_zero();
        if delayed {
            // LangGraph dates a delayed run at its start.
            record.created_at = stamp_after(options.delay);
        }
        let mut run = RunHandle::new(
            record,
            Plan { input, config, modes, graph: Some(graph.graph.clone()) },
            self.retention.event_log_bytes,
            limits.max_unread_event_bytes,
        );
        if delayed {
            run = run.not_before(Instant::now() + options.delay);
        }
        let run = Arc::new(run);
        let mut dropped = Vec::new();
        if thread.is_busy() && matches!(strategy, Multitask::Interrupt | Multitask::Rollback) {
            let how = if strategy == Multitask::Rollback { Stop::Rollback } else { Stop::Interrupt };
            let queued: Vec<String> = thread.queue.drain(..).collect();
            let active = thread.active.clone();
            for id in queued.iter().chain(active.iter()) {
                if let Some(r) = tables.runs.get(id) {
                    r.request_stop(how);
                }
            }
            // Queued runs never start now: they are settled below, as a cancel settles them.
            dropped = queued.iter().filter_map(|id| tables.runs.get(id).cloned().map(|r| (r, how))).collect();
        }
        let thread = tables.threads.get_mut(&thread_id).ok_or_else(|| thread_not_found(&thread_id))?;
        thread.queue.push_back(run_id.clone());
        thread.status = "busy";
        tables.runs.insert(run_id, run.clone());
        drop(tables);
        for (old, how) in dropped {
            old.take_plan();
            self.settle_unstarted(&old, how);
        }
        self.start_due(&thread_id);
        if delayed {
            let (local, delay) = (self.clone(), options.delay);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                local.start_due(&thread_id);
            });
        }
        Ok(run)
    }

    /// Starts the thread's first queued run that may start now, unless a run is in progress.
    fn start_due(self: &Arc<Self>, thread_id: &str) {
        let next = {
            let mut guard = self.tables();
            let tables = &mut *guard;
            let Some(thread) = tables.threads.get_mut(thread_id) else { return };
            if thread.active.is_some() {
                return;
            }
            let Some(id) = take_due(&mut thread.queue, &tables.runs) else { return };
            thread.active = Some(id.clone());
            thread.status = "busy";
            tables.runs.get(&id).cloned()
        };
        if let Some(run) = next {
            self.spawn(run);
        }
    }

    /// Asks a run to stop.
    pub(super) fn cancel(
        &self,
        thread_id: &str,
        run_id: &str,
        how: Stop,
        grant: &Grant,
    ) -> Result<Arc<RunHandle>> {
        let run = self.run(thread_id, run_id, grant)?;
        if !run.record().is_finished() {
            run.request_stop(how);
            // A queued run never starts: take it off the queue and settle it here.
            let queued = {
                let mut tables = self.tables();
                let thread = tables.threads.get_mut(thread_id);
                match thread {
                    Some(t) if t.queue.contains(&run_id.to_owned()) => {
                        t.queue.retain(|id| id != run_id);
                        if !t.is_busy() {
                            // Its last waiting run (a delayed one) is gone.
                            t.status = "idle";
                        }
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
        let local = self.clone();
        tokio::spawn(async move { local.execute(run).await });
    }

    async fn execute(self: Arc<Self>, run: Arc<RunHandle>) {
        let Some(plan) = run.take_plan() else { return };
        let started_at = now();
        let record = run.record();
        let context = context_of(&record, &plan);
        let graph = plan.graph.clone();
        let mut push = |name: String, data: Value| run.push(name, &data);
        let outcome = match (run.stop_requested(), &graph) {
            (Some(how), _) => Outcome::Stopped(how),
            (None, None) => {
                run.set_status("running");
                let missing = format!("Assistant '{}' has no graph in this process", record.assistant_id);
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
        self.finish(&run, &record, outcome, graph.as_deref(), started_at).await;
    }

    /// Settles a run that ended: its status, its thread's state, its output, its webhook; then
    /// starts the thread's next queued run.
    async fn finish(
        self: &Arc<Self>,
        run: &Arc<RunHandle>,
        record: &RunRecord,
        outcome: Outcome,
        graph: Option<&dyn ServedGraph>,
        started_at: String,
    ) {
        let thread_id = &record.thread_id;
        let settled = exec::settle(graph, &*self.saver, thread_id, &record.run_id, &outcome).await;
        run.set_output(settled.output.clone());
        run.set_status(settled.status);
        if let Some(target) = webhook_of(record) {
            self.webhooks.deliver(target, FinalRecord::new(run.record(), &outcome, &settled, started_at));
        }
        let next = {
            let mut guard = self.tables();
            let tables = &mut *guard;
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
                    if let Some(id) = take_due(&mut thread.queue, &tables.runs) {
                        thread.active = Some(id.clone());
                        next = tables.runs.get(&id).cloned();
                    }
                }
                if thread.is_busy() {
                    // A run in progress, or runs waiting for their start.
                    thread.status = "busy";
                }
            }
            let waiting = tables.threads.get(thread_id).is_some_and(|t| t.is_busy());
            if temporary && !waiting {
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

/// Takes the first run of `queue` that may start now, dropping ids of runs no longer kept.
fn take_due(queue: &mut VecDeque<String>, runs: &HashMap<String, Arc<RunHandle>>) -> Option<String> {
    queue.retain(|id| runs.contains_key(id));
    let now = Instant::now();
    let at = queue.iter().position(|id| runs.get(id).is_some_and(|r| r.is_due(now)))?;
    queue.remove(at)
}

/// What hooks learn of a run.
fn context_of(record: &RunRecord, plan: &Plan) -> RunContext {
    RunContext::of(record.thread_id.clone(), record.run_id.clone(), &plan.config)
}
