//! Running a superstep's tasks: building each one's runtime, awaiting them (in place when there
//! is one; in parallel on the runtime's workers, or concurrently in place, otherwise), and
//! handling each result as it arrives.

use std::sync::Arc;

use super::running::Running;
use super::{Finished, Loop};
use crate::command::NodeOutput;
use crate::error::{BoxError, Error, Result};
use crate::interrupt::{interrupt_id, Interrupt, Scratchpad};
use crate::pregel::task::{self, Job, Task, TaskWrites};
use crate::runtime::{Runtime, TaskScope};
use crate::state::StateWrite;
use crate::stream::{EventMetadata, StreamEvent, StreamMode, StreamModes, TaskEvent};
use crate::value::ChannelValue;
use crate::State;

impl<S: State, C: Send + Sync + 'static> Loop<'_, S, C> {
    /// Runs every task that has no writes yet, concurrently; saves each one's writes as it finishes.
    /// Returns the interrupts raised by tasks.
    ///
    /// On a multi-thread runtime a step of several tasks spawns each on the runtime's workers, so
    /// they run in parallel (see [`Running`]); results are still handled one at a time, here, and
    /// writes are applied in task-path order afterwards, so the outcome does not depend on which
    /// task finished first.
    pub(super) async fn run_tasks(&mut self, tasks: &mut [Task<S>], step: i64) -> Result<Vec<Interrupt>> {
        let layout = self.layout;
        // Shared by every task of the step, so made once here rather than once per task.
        let checkpoint_id: Arc<str> = self.checkpoint_id.as_str().into();
        let checkpoint_ns = Arc::clone(&self.namespace);
        let available = self.ch.available_fields(layout);
        // A step of one task (every step of a chain) needs no list of jobs.
        let mut first: Option<Job<S, C>> = None;
        let mut jobs = Vec::new();
        // A step's only task has its writes saved with the step's checkpoint (see `deferred`).
        let alone = tasks.iter().filter(|t| t.writes.is_none()).count() == 1;
        for (i, t) in tasks.iter_mut().enumerate() {
            if t.writes.is_some() {
                continue;
            }
            let def = &layout.nodes[t.node];
            let Some(node) = def.node.clone() else {
                // START: its work is writing the input and following its edges.
                let input = self.ch.start.clone().unwrap_or_default();
                let goto = std::mem::take(&mut self.start_goto);
                let output = NodeOutput { writes: input.into_iter().map(StateWrite::new).collect(), goto };
                let writes = task::route(layout, t.node, &self.ch.state, output)?;
                self.save_writes(t, &writes, None, alone).await?;
                t.writes = Some(writes);
                continue;
            };
            if let Some(sink) = self.sink.filter(|s| s.wants(StreamMode::Tasks) || s.wants(StreamMode::Debug))
            {
                sink.send(StreamEvent::Task(TaskEvent::Start {
                    id: t.id.to_string(),
                    name: def.name.to_string(),
                    triggers: t.triggers.iter().map(|t| t.to_string()).collect(),
                    step,
                }));
            }
            let mut scratchpad = Scratchpad {
                parent_ns: Arc::clone(&checkpoint_ns),
                node: Arc::clone(&def.name),
                task_id: Arc::clone(&t.id),
                resume: self.resume.get(&*t.id).cloned().unwrap_or_default(),
                null_resume: Arc::clone(&self.null_resume),
                resume_map: self.resume_map.clone(),
                counter: 0,
                used: 0,
            };
            if let Some(map) = &self.resume_map {
                // The answer to the task's next interrupt; older writers gave all of a task's
                // interrupts the first id.
                let ns = scratchpad.task_ns();
                let next = interrupt_id(&ns, scratchpad.resume.len());
                if let Some(v) = map.get(&next).or_else(|| map.get(&interrupt_id(&ns, 0))) {
                    scratchpad.resume.push(v.clone());
                }
            }
            let scope = TaskScope {
                scratchpad: parking_lot::Mutex::new(scratchpad),
                available,
                checkpoint_id: Arc::clone(&checkpoint_id),
                checkpointer: self.committer.as_ref().map(|p| Arc::clone(&p.saver)),
                store: self.store.clone(),
                parents: self.config.parents.clone(),
                recursion_limit: self.config.recursion_limit,
                configurable: Arc::clone(&self.configurable),
                metadata: EventMetadata {
                    node: def.name.clone(),
                    step,
                    task_id: t.id.clone(),
                    checkpoint_ns: Arc::clone(&checkpoint_ns),
                },
                thread_id: self.thread.clone(),
                modes: self.sink.map_or(StreamModes::NONE, |s| s.modes),
                sink: self.side.clone(),
            };
            let runtime = Runtime::new(Arc::clone(&self.context), Arc::new(scope));
            let input = t.input.take().unwrap_or_else(|| self.ch.state.clone());
            let retry = def.retry.clone();
            let timeout = self.config.node_timeout;
            let span = tracing::info_span!(
                "graph.node",
                node = %def.name,
                step,
                task_id = %t.id,
                attempt = tracing::field::Empty,
                outcome = tracing::field::Empty,
            );
            let job = Job { index: i, node, input, runtime, retry, timeout, span, blocking: def.blocking };
            match first.take() {
                None if jobs.is_empty() => first = Some(job),
                earlier => jobs.extend(earlier.into_iter().chain([job])),
            }
        }
        let mut done = Finished { failure: None, interrupts: Vec::new() };
        if let Some(job) = first {
            // One task: its future is built and awaited in place, inside this one, without a
            // heap allocation (a task's future is too large for the allocator's fast path) or
            // the bookkeeping of concurrent polling.
            let (i, result, resumed) = job.run().await;
            self.complete(&mut tasks[i], result, resumed, step, &mut done, true).await?;
        } else if !jobs.is_empty() {
            let mut running = Running::start(jobs.into_iter().map(|j| (j.index, j.run())), self.spawn_tasks);
            while let Some((i, result, resumed)) = running.next().await {
                let last = running.is_empty();
                self.complete(&mut tasks[i], result, resumed, step, &mut done, last).await?;
            }
        }
        // Every task ran to its end first, so the writes of those that succeeded are saved and a
        // resumed run re-executes only the failed ones.
        done.failure.map_or(Ok(done.interrupts), Err)
    }

    /// Handles one finished task: routes and saves its writes, or records its interrupt or error,
    /// each with the answers to interrupts the task used (`resumed`), as LangGraph records them.
    /// The writes of the `last` task of a step that nothing failed or interrupted are kept for the
    /// step's checkpoint.
    pub(super) async fn complete(
        &mut self,
        t: &mut Task<S>,
        result: std::result::Result<NodeOutput<S>, BoxError>,
        resumed: Option<Vec<serde_json::Value>>,
        step: i64,
        done: &mut Finished,
        last: bool,
    ) -> Result<()> {
        let layout = self.layout;
        let name = layout.nodes[t.node].name.clone();
        match result {
            Ok(output) => match task::route(layout, t.node, &self.ch.state, output) {
                Ok(mut writes) => {
                    self.stream_written_messages(t, &mut writes, step)?;
                    self.emit_task_result(t, &writes, None, step);
                    let defer = last && done.failure.is_none() && done.interrupts.is_empty();
                    self.save_writes(t, &writes, resumed, defer).await?;
                    t.writes = Some(writes);
                }
                Err(e) => {
                    done.failure.get_or_insert(e);
                }
            },
            Err(source) => {
                if let Some(raised) = task::as_interrupt(&source) {
                    tracing::debug!(node = %name, step, count = raised.len(), "node interrupted");
                    let mut special = vec![("__interrupt__".to_owned(), ChannelValue::new(raised.clone()))];
                    special.extend(resumed.map(resume_write));
                    self.save_special(t, special).await?;
                    done.interrupts.extend(raised);
                    return Ok(());
                }
                tracing::warn!(node = %name, step, error = %source, "node failed");
                self.emit_task_result(t, &TaskWrites::empty(), Some(source.to_string()), step);
                let mut special: Vec<_> = resumed.map(resume_write).into_iter().collect();
                special.push(("__error__".to_owned(), ChannelValue::new(source.to_string())));
                self.save_special(t, special).await?;
                done.failure.get_or_insert(Error::Node { node: name.to_string(), source });
            }
        }
        Ok(())
    }

    pub(super) fn emit_task_result(
        &self,
        t: &Task<S>,
        writes: &TaskWrites<S>,
        error: Option<String>,
        step: i64,
    ) {
        let Some(sink) = self.sink else { return };
        let name = &*self.layout.nodes[t.node].name;
        if sink.wants(StreamMode::Updates) && error.is_none() {
            let updates: Vec<S::Update> = writes.state.iter().map(|w| w.update.clone()).collect();
            sink.send(StreamEvent::Updates { node: name.to_owned(), updates });
        }
        if sink.wants(StreamMode::Tasks) || sink.wants(StreamMode::Debug) {
            sink.send(StreamEvent::Task(TaskEvent::Result {
                id: t.id.to_string(),
                name: name.to_owned(),
                error,
                step,
            }));
        }
    }
}

/// A task's `__resume__` write: the answers it used, in call order.
pub(super) fn resume_write(answers: Vec<serde_json::Value>) -> (String, ChannelValue) {
    ("__resume__".to_owned(), ChannelValue::new(answers))
}
