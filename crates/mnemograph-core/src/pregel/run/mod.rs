//! The superstep loop: load, run tasks in parallel, apply writes, checkpoint, stream.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use tracing::Instrument;

use super::channels::{writes, Channels};
use super::checkpoint_codec::{self, CheckpointCache, VersionText};
use super::commit::{Committed, Committer};
use super::plan::{ChannelKind, Layout};
use super::task::{Task, TaskWrites};
use super::Pregel;
use crate::checkpoint::{CheckpointSource, CheckpointTuple, PendingWrite, WriteBatch, NULL_TASK_ID};
use crate::command::{Command, Goto, Input};
use crate::config::{Durability, RunConfig};
use crate::error::{Error, Result};
use crate::interrupt::{Breakpoint, Interrupt, NullResume, Resume, RunOutcome};
use crate::pregel::saver_spans::{saver_span, SaverOp};
use crate::runtime::{SideEvent, SideSink};
use crate::state::FieldSet;
use crate::stream::{EventMetadata, StreamEvent, StreamMode, StreamModes};
use crate::value::ChannelValue;
use crate::State;
use mnemograph_checkpoint::__private::is_control_write;

mod execute;
mod hand_off;
pub(crate) mod remembered;
mod running;
mod written_messages;

/// Where stream events go, and which ones are wanted.
pub(crate) struct Sink<S: State> {
    pub(crate) tx: UnboundedSender<Result<StreamEvent<S>>>,
    pub(crate) modes: StreamModes,
}

impl<S: State> Sink<S> {
    fn wants(&self, mode: StreamMode) -> bool {
        self.modes.contains(mode)
    }
    fn send(&self, event: StreamEvent<S>) {
        // A closed receiver means the consumer went away; the run is being dropped with it.
        let _ = self.tx.send(Ok(event));
    }
}

struct Loop<'g, S: State, C> {
    layout: &'g Layout<S, C>,
    config: &'g RunConfig,
    context: Arc<C>,
    sink: Option<&'g Sink<S>>,
    side: Option<SideSink>,
    thread: Option<Arc<str>>,
    /// `config.configurable`, shared by the runtime of every task of the run.
    configurable: Arc<serde_json::Map<String, serde_json::Value>>,
    /// `config.checkpoint_ns`, shared by the runtime of every task of the run.
    namespace: Arc<str>,
    ch: Channels<S>,
    step: i64,
    checkpoint_id: String,
    committer: Option<Committer>,
    vt: VersionText,
    cache: CheckpointCache,
    /// Whether the current channel table has changes no checkpoint holds yet.
    dirty: bool,
    /// Resume values per task id (LangGraph's `__resume__` writes), handed to re-run tasks.
    resume: HashMap<String, Vec<serde_json::Value>>,
    /// The run's answer for a single pending interrupt, until a task takes it (LangGraph's
    /// `__resume__` write of the null task).
    null_resume: NullResume,
    /// The run's answers by interrupt id (LangGraph keeps them in the run's config, unsaved).
    resume_map: Option<Arc<std::collections::BTreeMap<String, serde_json::Value>>>,
    store: Option<Arc<dyn crate::store::DynStore>>,
    /// The writes of the step's last task to finish, saved together with the checkpoint that
    /// follows the step (one durable commit instead of two).
    deferred: Option<WriteBatch>,
    /// The previous step's task list, emptied, for the next step to fill, so that every step
    /// reuses one allocation instead of making its own.
    spare_tasks: Vec<Task<S>>,
    /// Whether a step of several tasks may spawn them on a multi-thread runtime's workers
    /// ([`CompiledGraph::with_spawned_tasks`](crate::CompiledGraph::with_spawned_tasks)).
    spawn_tasks: bool,
    /// The destinations of a command that is the run's input on a thread without a checkpoint:
    /// the START task goes there, as LangGraph's START does with a `Command` input.
    start_goto: Vec<Goto<S>>,
}

/// What the tasks of one step left besides their writes.
struct Finished {
    /// The first failure.
    failure: Option<Error>,
    /// Interrupts raised, in completion order.
    interrupts: Vec<Interrupt>,
}

/// Why the loop stopped early.
#[derive(Default)]
struct Stop {
    breakpoint: Option<Breakpoint>,
    interrupts: Vec<Interrupt>,
}

pub(crate) async fn run<S: State, C: Send + Sync + 'static>(
    graph: &Pregel<S, C>,
    input: Input<S>,
    config: &RunConfig,
    sink: Option<&Sink<S>>,
) -> Result<RunOutcome<S>> {
    run_from(graph, input, config, sink, &mut None).await
}

/// [`run`], reporting in `started_at` the id of the checkpoint the run loaded (`None`: none), so
/// a caller can tell a conflict on the run's first commit (whose expected parent is that id:
/// nothing was committed) from one on a later commit.
pub(crate) async fn run_from<S: State, C: Send + Sync + 'static>(
    graph: &Pregel<S, C>,
    input: Input<S>,
    config: &RunConfig,
    sink: Option<&Sink<S>>,
    started_at: &mut Option<String>,
) -> Result<RunOutcome<S>> {
    // `info`: a run and its nodes tell the story of a turn; supersteps and saves are `debug`. The
    // span holds the whole run, from reading the thread to its last save, a second attempt from
    // a real read included.
    let span = tracing::info_span!(
        "graph.run",
        graph.name = &*graph.name,
        run_id = tracing::field::Empty,
        thread_id = config.thread_id.as_deref().unwrap_or(""),
        checkpoint_ns = %config.checkpoint_ns,
        steps = tracing::field::Empty,
        outcome = tracing::field::Empty,
    );
    if !span.is_disabled() {
        // The caller's run id when it gave one, as LangGraph's `config["run_id"]`; made only for a
        // subscriber that records the span.
        match config.metadata.get("run_id").and_then(serde_json::Value::as_str) {
            Some(id) => span.record("run_id", id),
            None => span.record("run_id", crate::checkpoint::backend::uuid6(-2).as_str()),
        };
    }
    let outcome = async {
        // From the remembered checkpoint when that is allowed, and again from a real read when
        // the first attempt failed before its first commit; otherwise from a real read at once.
        let Some((remembered, again)) = remembered::start(graph, &input, config, sink.is_some()) else {
            return run_loaded(graph, input, config, sink, started_at, None, None).await;
        };
        let committed = Committed::default();
        let first =
            run_loaded(graph, input, config, sink, started_at, Some(remembered), Some(committed.clone())).await;
        match first {
            Err(e) if !committed.get() => {
                tracing::debug!(error = %e, "the remembered checkpoint was not the thread's latest; reading it");
                run_loaded(graph, again, config, sink, started_at, None, None).await
            }
            other => other,
        }
    }
    .instrument(span.clone())
    .await;
    span.record(
        "outcome",
        match &outcome {
            Ok(_) => "ok",
            Err(e) if e.is_conflict() => "conflict",
            Err(_) => "error",
        },
    );
    outcome
}

/// [`run_from`] starting from `preloaded` instead of the checkpoint the saver reads, when given
/// (see [`remembered`]); `committed` is told of the run's first successful commit. Runs inside
/// the run's span, where it records the steps taken.
async fn run_loaded<S: State, C: Send + Sync + 'static>(
    graph: &Pregel<S, C>,
    input: Input<S>,
    config: &RunConfig,
    sink: Option<&Sink<S>>,
    started_at: &mut Option<String>,
    preloaded: Option<CheckpointTuple>,
    committed: Option<Committed>,
) -> Result<RunOutcome<S>> {
    let layout = &graph.layout;
    let context = graph.context_or_unit()?;
    let mut vt = VersionText::default();
    let mut pending: HashMap<String, Vec<PendingWrite>> = HashMap::new();
    let (mut committer, loaded) = match graph.checkpointer.clone() {
        Some(saver) => {
            let cfg = config.checkpoint_config().ok_or(Error::MissingThreadId)?;
            let loaded = match preloaded {
                Some(tuple) => Some(tuple),
                None => saver.get_tuple(&cfg).instrument(saver_span(SaverOp::GetTuple, &cfg)).await?,
            };
            started_at.clone_from(&loaded.as_ref().and_then(|t| t.config.checkpoint_id.clone()));
            let saved = loaded.as_ref().map_or(cfg, |t| t.config.clone());
            let from_latest = config.checkpoint_id.is_none();
            let mut committer = Committer::new(saver, saved, config.durability, from_latest);
            committer.committed = committed;
            (Some(committer), loaded)
        }
        None => (None, None),
    };
    let (ch, step, checkpoint_id) = match &loaded {
        Some(t) => {
            let mut ch = checkpoint_codec::from_checkpoint(layout, &t.checkpoint, &mut vt)
                .map_err(|e| with_thread(e, config))?;
            if let Some(p) = committer.as_mut() {
                p.saved_versions = ch.versions.clone();
            }
            // Replaying an older checkpoint forks: its old pending writes are not re-applied.
            if config.checkpoint_id.is_none() {
                for w in &t.pending_writes {
                    pending.entry(w.task_id.clone()).or_default().push(w.clone());
                }
            }
            ch.foreign_seen.remove("__input__");
            (ch, t.metadata.step, t.checkpoint.id.clone())
        }
        None => (Channels::new(layout), -2, String::new()),
    };
    let side = sink.map(|s| side_sink(s.tx.clone()));
    let mut lp = Loop {
        layout,
        config,
        context,
        sink,
        side,
        thread: config.thread_id.as_deref().map(Arc::from),
        configurable: Arc::new(config.configurable.clone()),
        namespace: config.checkpoint_ns.as_str().into(),
        ch,
        step,
        checkpoint_id,
        committer,
        vt,
        cache: CheckpointCache::default(),
        dirty: false,
        resume: HashMap::new(),
        null_resume: NullResume::default(),
        resume_map: None,
        store: graph.store.clone(),
        deferred: None,
        spare_tasks: Vec::new(),
        spawn_tasks: graph.spawn_tasks,
        start_goto: Vec::new(),
    };
    // Resume values and interrupts already recorded against the checkpoint.
    let mut pending_interrupts: Vec<(String, Interrupt)> = Vec::new();
    for (task_id, writes) in &pending {
        for w in writes {
            match w.channel.as_str() {
                "__resume__" if task_id == NULL_TASK_ID => {
                    *lp.null_resume.lock() = Some(w.value.decode().map_err(Error::Value)?);
                }
                "__resume__" => {
                    // A list of the task's answers; a single value counts as a list of one.
                    let answers = match w.value.decode().map_err(Error::Value)? {
                        serde_json::Value::Array(list) => list,
                        one => vec![one],
                    };
                    lp.resume.insert(task_id.clone(), answers);
                }
                "__interrupt__" => {
                    let list: Vec<Interrupt> = w.value.decode().map_err(Error::Value)?;
                    pending_interrupts.extend(list.into_iter().map(|i| (task_id.clone(), i)));
                }
                _ => {}
            }
        }
    }
    let replaying = loaded.is_some() && config.checkpoint_id.is_some();
    // The null task's writes (a command given as input to an earlier run) apply to the loaded
    // checkpoint on every run from it, whatever the input, as LangGraph applies them.
    let null_writes: Vec<PendingWrite> = loaded
        .as_ref()
        .map(|t| {
            let null = |w: &&PendingWrite| w.task_id == NULL_TASK_ID && !is_control_write(&w.channel);
            t.pending_writes.iter().filter(null).cloned().collect()
        })
        .unwrap_or_default();
    // Resuming (no new input, or a command, on a checkpoint) shows the state it resumes from
    // first, as LangGraph's `values` stream does.
    let resuming =
        loaded.is_some() && matches!(input, Input::Resume | Input::ResumeWith(_) | Input::Command { .. });
    match input {
        Input::Command { command, resume } => match &loaded {
            Some(t) => {
                let forks = replaying
                    && resume.is_none()
                    && !matches!(t.metadata.source, CheckpointSource::Update | CheckpointSource::Fork);
                lp.command_on_checkpoint(command, resume, null_writes, &pending_interrupts, forks).await?;
            }
            None => lp.command_as_input(command, resume).await?,
        },
        Input::Update(_) | Input::State(_) => {
            lp.apply_null_writes(&null_writes)?;
            let updates = match input {
                Input::Update(update) => vec![update],
                Input::State(state) => full_update(&state, config.input_fields)?,
                _ => Vec::new(),
            };
            // A new input supersedes whatever the last checkpoint's tasks left pending.
            // and the tasks it would have run are discarded (marked seen), as LangGraph does.
            pending.clear();
            let mut discarded = match &loaded {
                Some(_) => {
                    lp.ch.prepare_tasks(layout, &lp.checkpoint_id, &config.checkpoint_ns, lp.step + 1)?
                }
                None => Vec::new(),
            };
            for t in &mut discarded {
                t.writes = Some(TaskWrites::empty());
            }
            lp.step += 1;
            let updated = lp.ch.apply_writes(layout, &mut discarded, Some(updates))?;
            lp.checkpoint(CheckpointSource::Input, &updated).await?;
        }
        Input::Resume if loaded.is_none() => {
            return Ok(RunOutcome::done(lp.ch.state));
        }
        Input::Resume | Input::ResumeWith(_) => {
            lp.apply_null_writes(&null_writes)?;
            if let Input::ResumeWith(resume) = input {
                lp.answer_interrupts(resume, &pending_interrupts).await?;
            }
            // Resuming acknowledges every change so far: a breakpoint does not fire again until
            // something new happens.
            lp.ch.interrupt_seen.clone_from(&lp.ch.versions);
            if replaying {
                // The fork is a step of its own, as in LangGraph.
                lp.step += 1;
                lp.checkpoint(CheckpointSource::Fork, &[]).await?;
            }
        }
    }
    if let Some(sink) = lp.sink.filter(|s| resuming && s.wants(StreamMode::Values)) {
        sink.send(StreamEvent::Values(lp.ch.state.clone()));
    }
    let stop = match lp.run_loop(pending).await {
        Ok(stop) => stop,
        Err(e) => return Err(lp.save_deferred(e).await),
    };
    tracing::Span::current().record("steps", lp.step);
    lp.finish(stop).await
}

fn with_thread(e: Error, config: &RunConfig) -> Error {
    checkpoint_codec::in_thread(e, config.thread_id.as_deref().unwrap_or_default())
}

/// A whole state as single-field updates, one per field of `fields` (every field when `None`).
pub(crate) fn full_update<S: State>(state: &S, fields: Option<FieldSet>) -> Result<Vec<S::Update>> {
    (0..S::FIELDS.len())
        .filter(|i| fields.is_none_or(|set| set.contains(*i)))
        .map(|i| Ok(S::update_from_value(i, &state.get_field(i))?))
        .collect()
}

/// The sink of a run's node events. It keeps the ids of the message chunks it streamed, so that
/// the message a node then writes with the same id is not streamed a second time.
fn side_sink<S: State>(tx: UnboundedSender<Result<StreamEvent<S>>>) -> SideSink {
    let streamed = parking_lot::Mutex::new(std::collections::HashSet::<String>::new());
    Arc::new(move |event, meta: &EventMetadata| {
        let event = match event {
            SideEvent::Custom(value) => StreamEvent::Custom { value, metadata: meta.clone() },
            SideEvent::Message(chunk) => {
                if let Some(id) = chunk.id() {
                    streamed.lock().insert(id.to_owned());
                }
                StreamEvent::Messages { chunk, metadata: meta.clone() }
            }
            SideEvent::Written(message) => {
                if message.id().is_some_and(|id| !streamed.lock().insert(id.to_owned())) {
                    return;
                }
                StreamEvent::Messages { chunk: message, metadata: meta.clone() }
            }
        };
        let _ = tx.send(Ok(event));
    })
}

impl<S: State, C: Send + Sync + 'static> Loop<'_, S, C> {
    /// Takes the run's answers, as LangGraph does: a single value is saved as the null task's
    /// `__resume__` write and goes to the first `interrupt()` call that has no answer; answers by
    /// interrupt id stay with the run and reach the tasks whose interrupts they name.
    async fn answer_interrupts(&mut self, resume: Resume, pending: &[(String, Interrupt)]) -> Result<()> {
        match resume {
            Resume::Value(v) => {
                if pending.len() > 1 {
                    return Err(Error::AmbiguousResume);
                }
                // A subgraph's answer stays in its parent's writes, where Python looks for it.
                if let Some(p) = self.committer.as_ref().filter(|_| !self.config.resume_from_parent) {
                    let write = vec![("__resume__".to_owned(), ChannelValue::new(v.clone()))];
                    let span = saver_span(SaverOp::PutWrites, &p.saved);
                    p.saver.put_writes(&p.saved, write, NULL_TASK_ID, "").instrument(span).await?;
                }
                *self.null_resume.lock() = Some(v);
            }
            Resume::ById(map) => self.resume_map = Some(Arc::new(map)),
        }
        Ok(())
    }

    /// Applies the null task's `writes` loaded with the checkpoint (see
    /// [`Channels::apply_null_writes`]); returns the channels they updated.
    fn apply_null_writes(&mut self, writes: &[PendingWrite]) -> Result<Vec<usize>> {
        if writes.is_empty() {
            return Ok(Vec::new());
        }
        let refs: Vec<&PendingWrite> = writes.iter().collect();
        self.ch.apply_null_writes(self.layout, writes::pending_to_writes(self.layout, &refs)?)
    }

    /// A command given as input on a thread with a checkpoint, as LangGraph's `_first` takes it:
    /// its writes (after the checkpoint's earlier null writes, the resume value last) are saved
    /// as the null task's pending writes of the loaded checkpoint, then every null write is
    /// applied to the channels, and the run continues from there. With `forks` (a replay of an
    /// older checkpoint without a resume value) nothing is saved on the addressed checkpoint: the
    /// fork checkpoint the run saves instead holds the command's writes.
    async fn command_on_checkpoint(
        &mut self,
        command: Command<S>,
        resume: Option<Resume>,
        mut null_writes: Vec<PendingWrite>,
        pending: &[(String, Interrupt)],
        forks: bool,
    ) -> Result<()> {
        if command.is_empty() && resume.is_none() {
            return Err(Error::EmptyInput);
        }
        if matches!(resume, Some(Resume::Value(_))) && pending.len() > 1 {
            return Err(Error::AmbiguousResume);
        }
        let new = writes::command_to_pending(self.layout, &command)?;
        let resume_value = match resume {
            Some(Resume::Value(v)) => Some(v),
            Some(Resume::ById(map)) => {
                self.resume_map = Some(Arc::new(map));
                None
            }
            None => None,
        };
        if let Some(p) = self.committer.as_ref().filter(|_| !forks && !self.config.resume_from_parent) {
            // Regular writes are keyed by their position in the list, so the earlier ones are
            // saved again in front, where they already are; the resume value takes its own slot.
            let mut list: Vec<(String, ChannelValue)> =
                null_writes.iter().map(|w| (w.channel.clone(), w.value.clone())).collect();
            list.extend(new.iter().cloned());
            list.extend(resume_value.iter().map(|v| ("__resume__".to_owned(), ChannelValue::new(v.clone()))));
            if !list.is_empty() {
                let span = saver_span(SaverOp::PutWrites, &p.saved);
                p.saver.put_writes(&p.saved, list, NULL_TASK_ID, "").instrument(span).await?;
            }
        }
        if let Some(v) = resume_value {
            *self.null_resume.lock() = Some(v);
        }
        null_writes.extend(new.into_iter().map(|(channel, value)| PendingWrite {
            task_id: NULL_TASK_ID.to_owned(),
            channel,
            value,
        }));
        let updated = self.apply_null_writes(&null_writes)?;
        // As any resume: the run acknowledges every change so far, for the breakpoints.
        self.ch.interrupt_seen.clone_from(&self.ch.versions);
        if forks {
            self.step += 1;
            self.checkpoint(CheckpointSource::Fork, &updated).await?;
        }
        Ok(())
    }

    /// A command given as input on a thread without a checkpoint (or to a graph without a
    /// checkpointer), as LangGraph takes it: its writes apply to the empty channels, and the
    /// command is then the run's input, so the START task writes its updates again and goes to
    /// its destinations. What the null writes triggered is discarded with the input, as a new
    /// input discards a checkpoint's pending tasks. A resume value has nothing to answer here.
    async fn command_as_input(&mut self, command: Command<S>, resume: Option<Resume>) -> Result<()> {
        if command.is_empty() && resume.is_none() {
            return Err(Error::EmptyInput);
        }
        if resume.is_some() && self.committer.is_none() {
            return Err(Error::NoCheckpointer);
        }
        let layout = self.layout;
        let new = writes::command_to_pending(layout, &command)?;
        let null_writes: Vec<PendingWrite> = new
            .into_iter()
            .map(|(channel, value)| PendingWrite { task_id: NULL_TASK_ID.to_owned(), channel, value })
            .collect();
        self.apply_null_writes(&null_writes)?;
        let mut discarded =
            self.ch.prepare_tasks(layout, &self.checkpoint_id, &self.config.checkpoint_ns, self.step + 1)?;
        for t in &mut discarded {
            t.writes = Some(TaskWrites::empty());
        }
        self.step += 1;
        let input = command.update.into_iter().map(|w| w.update).collect();
        self.start_goto = command.goto;
        let updated = self.ch.apply_writes(layout, &mut discarded, Some(input))?;
        self.checkpoint(CheckpointSource::Input, &updated).await
    }

    /// Runs supersteps until no task is left, or a breakpoint or interrupt stops the run.
    async fn run_loop(&mut self, mut pending: HashMap<String, Vec<PendingWrite>>) -> Result<Stop> {
        let limit = self.config.recursion_limit;
        let before = self.breakpoints(&self.layout.interrupt_before, &self.config.interrupt_before);
        let after = self.breakpoints(&self.layout.interrupt_after, &self.config.interrupt_after);
        // LangGraph's stop rule: `stop = step + recursion_limit + 1`, checked before each step.
        let stop = self.step + limit as i64 + 1;
        loop {
            let next_step = self.step + 1;
            let ns = self.config.checkpoint_ns.as_str();
            if next_step > stop {
                return Err(Error::RecursionLimit { limit });
            }
            let mut tasks = std::mem::take(&mut self.spare_tasks);
            self.ch.prepare_tasks_into(&mut tasks, self.layout, &self.checkpoint_id, ns, next_step)?;
            if tasks.is_empty() {
                return Ok(Stop::default());
            }
            if !before.is_empty() {
                let hits = self.ch.breakpoint_hits(self.layout, &before, &tasks);
                if !hits.is_empty() {
                    return Ok(Stop { breakpoint: Some(Breakpoint::Before(hits)), ..Stop::default() });
                }
            }
            if !pending.is_empty() {
                for t in &mut tasks {
                    if let Some(ws) = pending.remove(&*t.id) {
                        // A task that failed or was interrupted left only special writes: run it
                        // again (with its resume values, if any).
                        let refs: Vec<&PendingWrite> =
                            ws.iter().filter(|w| !is_control_write(&w.channel)).collect();
                        if !refs.is_empty() {
                            t.writes = Some(writes::pending_to_writes(self.layout, &refs)?);
                        }
                    }
                }
                pending.clear();
            }
            if let Some(p) = self.committer.as_mut().filter(|p| p.holds()) {
                // The held input checkpoint goes with this step's only if the step just routes
                // the input (the START task alone): no code of the user's runs in between.
                let routes_only = tasks.len() == 1 && self.layout.nodes[tasks[0].node].node.is_none();
                if !routes_only {
                    p.store_held().await?;
                }
            }
            let span = tracing::debug_span!("superstep", step = next_step, tasks = tasks.len());
            let interrupts = self.run_tasks(&mut tasks, next_step).instrument(span).await?;
            if !interrupts.is_empty() {
                // The step stays unfinished: its input checkpoint holds the finished tasks' writes
                // and the interrupts; resuming re-runs only the interrupted tasks.
                return Ok(Stop { interrupts, ..Stop::default() });
            }
            let updated = self.ch.apply_writes(self.layout, &mut tasks, None)?;
            self.step = next_step;
            self.checkpoint(CheckpointSource::Loop, &updated).await?;
            if let Some(sink) = self.sink {
                let state_changed =
                    updated.iter().any(|c| matches!(self.layout.channels[*c].kind, ChannelKind::Field(_)));
                if sink.wants(StreamMode::Values) && state_changed {
                    sink.send(StreamEvent::Values(self.ch.state.clone()));
                }
            }
            if !after.is_empty() {
                let hits = self.ch.breakpoint_hits(self.layout, &after, &tasks);
                if !hits.is_empty() {
                    return Ok(Stop { breakpoint: Some(Breakpoint::After(hits)), ..Stop::default() });
                }
            }
            tasks.clear();
            self.spare_tasks = tasks;
        }
    }

    /// Breakpoint nodes: the graph's compile-time ones plus this run's.
    fn breakpoints(&self, compiled: &[usize], per_run: &[String]) -> Vec<usize> {
        let mut nodes = compiled.to_vec();
        nodes.extend(per_run.iter().filter_map(|n| self.layout.node(n)));
        nodes
    }

    async fn finish(mut self, stop: Stop) -> Result<RunOutcome<S>> {
        if self.dirty && self.committer.as_ref().is_some_and(|p| p.durability == Durability::Exit) {
            self.save(CheckpointSource::Loop, &[]).await?;
        }
        if let Some(p) = self.committer.as_mut() {
            // A run returns only once its last checkpoint is durable, whatever the mode.
            p.flush().await?;
        }
        let available = self.ch.available_fields(self.layout);
        Ok(RunOutcome {
            breakpoint: stop.breakpoint,
            interrupts: stop.interrupts,
            available,
            ..RunOutcome::done(self.ch.state)
        })
    }
}
