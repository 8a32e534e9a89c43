//! [`ServedGraph`]: a compiled graph with its state type erased, speaking JSON, so that one server
//! holds graphs of different state types.

use std::sync::Arc;

use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use mnemograph_core::checkpoint::{CheckpointConfig, DynCheckpointer, ListOptions};
use mnemograph_core::value::ChannelValue;
use mnemograph_core::{
    BoxFuture, Command, CompiledGraph, Input, Interrupt, Push, Resume, RunConfig, State, StateSnapshot,
    StreamEvent, StreamModes,
};
use serde_json::{json, Map, Value};

use crate::error::ServerError;
use crate::events::Emitted;
use crate::hooks::{RunContext, RunEnd, RunHooks};

/// What a run starts from, as a request gives it.
#[derive(Debug, Clone)]
pub enum RunInput {
    /// `input`: an object of state fields, written through the reducers.
    Values(Map<String, Value>),
    /// `command.resume`: one value for the single pending interrupt.
    Resume(Value),
    /// `command.resume` as an object keyed by interrupt ids.
    ResumeById(Map<String, Value>),
    /// No input and no command: continue the thread from its checkpoint.
    Continue,
    /// `command` with `update` or `goto` (LangGraph's `Command` as input).
    Command {
        /// `(field, value)` pairs, in the order given.
        update: Vec<(String, Value)>,
        /// Destinations.
        goto: Vec<GotoInput>,
        /// `command.resume`, if any.
        resume: Option<ResumeInput>,
    },
}

/// A destination of `command.goto`.
#[derive(Debug, Clone)]
pub enum GotoInput {
    /// A node name.
    Node(String),
    /// LangGraph's `Send`: a node run with its own input, an object of state fields.
    Send {
        /// The node.
        node: String,
        /// Its input.
        input: Map<String, Value>,
    },
}

/// `command.resume` of a command that also updates or routes.
#[derive(Debug, Clone)]
pub enum ResumeInput {
    /// One value for the single pending interrupt.
    Value(Value),
    /// Values keyed by interrupt ids.
    ById(Map<String, Value>),
}

/// A thread's state at one checkpoint, as the API shows it (`ThreadState`).
pub(crate) type StateJson = Value;

/// A graph the server runs: its state and updates as JSON objects keyed by field name.
pub trait ServedGraph: Send + Sync {
    /// The state's field names, in declaration order.
    fn fields(&self) -> Vec<&'static str>;
    /// The graph's node names.
    fn nodes(&self) -> Vec<String>;
    /// Whether a node is a subgraph, whose own events the engine's stream does not carry.
    fn has_subgraphs(&self) -> bool;
    /// The graph's nodes and edges in LangGraph's JSON, its subgraphs opened `xray` levels deep.
    fn layout(&self, xray: usize) -> Value;
    /// The namespaces of its subgraphs, as
    /// [`CompiledGraph::get_subgraphs`](mnemograph_core::CompiledGraph::get_subgraphs) finds them.
    fn subgraphs(&self, namespace: Option<&str>, recurse: bool) -> Vec<String>;
    /// Runs the graph (after the hooks' `before_run`), yielding its stream as the API's events.
    fn run(
        &self,
        run: RunContext,
        input: RunInput,
        config: RunConfig,
        modes: StreamModes,
    ) -> BoxStream<'static, Result<Emitted, ServerError>>;
    /// The same graph and hooks on `saver`: a claimed run of a cluster runs on a saver that
    /// refuses its writes once the run is no longer its worker's.
    fn on_saver(&self, saver: Arc<dyn DynCheckpointer>) -> Arc<dyn ServedGraph>;
    /// Calls the hooks' `after_run`.
    fn after_run<'a>(&'a self, run: &'a RunContext, end: &'a RunEnd) -> BoxFuture<'a, ()>;
    /// The state at `config`'s checkpoint (the latest when it names none).
    fn state(&self, config: RunConfig) -> BoxFuture<'_, Result<Option<StateJson>, ServerError>>;
    /// The thread's checkpoints, newest first.
    fn history(
        &self,
        config: RunConfig,
        options: ListOptions,
    ) -> BoxFuture<'_, Result<Vec<StateJson>, ServerError>>;
    /// Writes `values` as if `as_node` had returned them.
    fn update_state(
        &self,
        config: RunConfig,
        values: Map<String, Value>,
        as_node: Option<String>,
    ) -> BoxFuture<'_, Result<CheckpointConfig, ServerError>>;
}

/// A [`CompiledGraph`] and its hooks behind [`ServedGraph`].
pub struct Served<S: State, C> {
    /// The graph.
    pub graph: Arc<CompiledGraph<S, C>>,
    /// What runs around each of its runs.
    pub hooks: Arc<dyn RunHooks<S, C>>,
}

impl<S: State, C> std::fmt::Debug for Served<S, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served").finish_non_exhaustive()
    }
}

/// The state as a JSON object of its fields.
pub(crate) fn state_json<S: State>(state: &S) -> Result<Value, ServerError> {
    let mut out = Map::new();
    for (i, field) in S::FIELDS.iter().enumerate() {
        out.insert(field.name.to_owned(), field_json(&state.get_field(i))?);
    }
    Ok(Value::Object(out))
}

/// The fields an update writes, as a JSON object.
fn update_json<S: State>(update: &S::Update) -> Result<Value, ServerError> {
    let mut out = Map::new();
    for (i, value) in S::update_values(update) {
        out.insert(S::FIELDS[i].name.to_owned(), field_json(&value)?);
    }
    Ok(Value::Object(out))
}

fn field_json(value: &ChannelValue) -> Result<Value, ServerError> {
    value.to_json().map_err(|e| ServerError::Unprocessable(format!("a state value is not JSON: {e}")))
}

/// An update from a JSON object; keys that are not fields are ignored, as LangGraph ignores
/// input keys that name no channel.
fn update_from_json<S: State>(values: Map<String, Value>) -> Result<S::Update, ServerError> {
    let pairs: Vec<(usize, ChannelValue)> = values
        .into_iter()
        .filter_map(|(k, v)| Some((S::field_index(&k)?, ChannelValue::Json(Arc::new(v)))))
        .collect();
    S::update_from_values(&pairs).map_err(|e| ServerError::Unprocessable(format!("invalid input: {e}")))
}

/// A state from a JSON object of its fields (a `Send`'s input); other fields keep their defaults
/// and keys that are not fields are ignored.
fn state_from_json<S: State>(values: Map<String, Value>) -> Result<S, ServerError> {
    let mut state = S::default();
    for (k, v) in values {
        if let Some(f) = S::field_index(&k) {
            state
                .set_field(f, &ChannelValue::Json(Arc::new(v)))
                .map_err(|e| ServerError::Unprocessable(format!("invalid `Send` input field `{k}`: {e}")))?;
        }
    }
    Ok(state)
}

/// The engine's command from a request's `command`: one update per field given, in order (keys
/// that are not fields write nothing, as LangGraph ignores writes to unknown channels).
fn command_input<S: State>(
    update: Vec<(String, Value)>,
    goto: Vec<GotoInput>,
    resume: Option<ResumeInput>,
) -> Result<Input<S>, ServerError> {
    let mut command = Command::<S>::new();
    for (k, v) in update {
        if S::field_index(&k).is_some() {
            command = command.update(update_from_json::<S>(Map::from_iter([(k, v)]))?);
        }
    }
    for g in goto {
        command = match g {
            GotoInput::Node(node) => command.goto(node),
            GotoInput::Send { node, input } => command.goto(Push::new(node, state_from_json::<S>(input)?)),
        };
    }
    Ok(match resume {
        None => Input::command(command),
        Some(ResumeInput::Value(v)) => Input::command_with(command, Resume::value(v)),
        Some(ResumeInput::ById(map)) => Input::command_with(command, Resume::by_id(map)),
    })
}

/// An interrupt as the API shows it.
pub(crate) fn interrupt_json(i: &Interrupt) -> Value {
    json!({ "value": i.value, "id": i.id })
}

fn checkpoint_json(c: &CheckpointConfig) -> Value {
    json!({
        "checkpoint_id": c.checkpoint_id,
        "thread_id": c.thread_id,
        "checkpoint_ns": c.checkpoint_ns,
    })
}

/// A snapshot as the API's `ThreadState`.
fn snapshot_json<S: State>(s: &StateSnapshot<S>) -> Result<StateJson, ServerError> {
    let tasks: Vec<Value> = s
        .tasks
        .iter()
        .map(|t| {
            json!({
                "id": t.id,
                "name": t.name,
                "path": ["__pregel_pull", t.name],
                "error": t.error,
                "interrupts": t.interrupts.iter().map(interrupt_json).collect::<Vec<_>>(),
                "checkpoint": null,
                "state": null,
                "result": null,
            })
        })
        .collect();
    let checkpoint = s.config.as_ref().map(checkpoint_json);
    let parent = s.parent_config.as_ref().map(checkpoint_json);
    Ok(json!({
        "values": state_json(&s.values)?,
        "next": s.next,
        "tasks": tasks,
        "metadata": s.metadata.as_ref().map(|m| m.to_json().into_value()),
        "created_at": s.created_at,
        "checkpoint": checkpoint,
        "parent_checkpoint": parent,
        "interrupts": s.interrupts.iter().map(interrupt_json).collect::<Vec<_>>(),
        "checkpoint_id": s.config.as_ref().and_then(|c| c.checkpoint_id.clone()),
        "parent_checkpoint_id": s.parent_config.as_ref().and_then(|c| c.checkpoint_id.clone()),
    }))
}

impl<S: State, C: Send + Sync + 'static> ServedGraph for Served<S, C> {
    fn fields(&self) -> Vec<&'static str> {
        S::FIELDS.iter().map(|f| f.name).collect()
    }

    fn nodes(&self) -> Vec<String> {
        self.graph.node_names().map(str::to_owned).collect()
    }

    fn has_subgraphs(&self) -> bool {
        self.graph.has_subgraphs()
    }

    fn layout(&self, xray: usize) -> Value {
        self.graph.get_graph_xray(xray).to_json()
    }

    fn subgraphs(&self, namespace: Option<&str>, recurse: bool) -> Vec<String> {
        self.graph.get_subgraphs(namespace, recurse).into_iter().map(|(ns, _)| ns).collect()
    }

    fn run(
        &self,
        run: RunContext,
        input: RunInput,
        mut config: RunConfig,
        modes: StreamModes,
    ) -> BoxStream<'static, Result<Emitted, ServerError>> {
        let (graph, hooks) = (self.graph.clone(), self.hooks.clone());
        let start = async move {
            hooks.before_run(&graph, &run, &mut config).await.map_err(ServerError::Hook)?;
            let input = match input {
                RunInput::Values(values) => Input::Update(update_from_json::<S>(values)?),
                RunInput::Resume(value) => Input::ResumeWith(Resume::value(value)),
                RunInput::ResumeById(map) => Input::ResumeWith(Resume::by_id(map)),
                RunInput::Continue => Input::Resume,
                RunInput::Command { update, goto, resume } => command_input::<S>(update, goto, resume)?,
            };
            let thread_id = config.thread_id.clone().unwrap_or_default();
            let mut run_metadata = config.metadata.clone();
            run_metadata.insert("thread_id".to_owned(), thread_id.clone().into());
            let mut last_values = Value::Null;
            let events = graph.stream(input, &config).modes(modes).flat_map(move |item| {
                let out: Vec<Result<Emitted, ServerError>> = match item {
                    Err(e) => vec![Err(e.into())],
                    Ok(event) => emitted::<S>(event, &mut last_values, modes, &thread_id, &run_metadata)
                        .into_iter()
                        .map(Ok)
                        .collect(),
                };
                futures_util::stream::iter(out)
            });
            Ok::<_, ServerError>(events)
        };
        futures_util::stream::once(start).try_flatten().boxed()
    }

    fn on_saver(&self, saver: Arc<dyn DynCheckpointer>) -> Arc<dyn ServedGraph> {
        let graph = (*self.graph).clone().with_shared_checkpointer(saver);
        Arc::new(Served { graph: Arc::new(graph), hooks: self.hooks.clone() })
    }

    fn after_run<'a>(&'a self, run: &'a RunContext, end: &'a RunEnd) -> BoxFuture<'a, ()> {
        self.hooks.after_run(&self.graph, run, end)
    }

    fn state(&self, config: RunConfig) -> BoxFuture<'_, Result<Option<StateJson>, ServerError>> {
        Box::pin(async move {
            let snapshot = self.graph.get_state(&config).await?;
            if snapshot.config.is_none() {
                return Ok(None);
            }
            snapshot_json(&snapshot).map(Some)
        })
    }

    fn history(
        &self,
        config: RunConfig,
        options: ListOptions,
    ) -> BoxFuture<'_, Result<Vec<StateJson>, ServerError>> {
        Box::pin(async move {
            let snapshots = self.graph.get_state_history(&config, options).await?;
            snapshots.iter().map(snapshot_json).collect()
        })
    }

    fn update_state(
        &self,
        config: RunConfig,
        values: Map<String, Value>,
        as_node: Option<String>,
    ) -> BoxFuture<'_, Result<CheckpointConfig, ServerError>> {
        Box::pin(async move {
            let update = update_from_json::<S>(values)?;
            Ok(self.graph.update_state(&config, update, as_node.as_deref()).await?)
        })
    }
}

/// The API events one engine event becomes. A message chunk carries `run_metadata` (the run's
/// metadata and thread) with where it came from, as LangGraph's chunks carry the run's config.
fn emitted<S: State>(
    event: StreamEvent<S>,
    last_values: &mut Value,
    modes: StreamModes,
    thread_id: &str,
    run_metadata: &Map<String, Value>,
) -> Vec<Emitted> {
    use mnemograph_core::StreamMode;
    let fail = |e: ServerError| {
        vec![Emitted::new("error", json!({"error": "ValueError", "message": e.to_string()}))]
    };
    match event {
        StreamEvent::Values(state) => match state_json(&state) {
            Ok(v) => {
                *last_values = v.clone();
                if modes.contains(StreamMode::Values) {
                    vec![Emitted::new("values", v)]
                } else {
                    Vec::new()
                }
            }
            Err(e) => fail(e),
        },
        StreamEvent::Updates { node, updates } => {
            let mut out = Vec::new();
            for u in &updates {
                match update_json::<S>(u) {
                    Ok(v) => out.push(Emitted::new("updates", json!({ node.clone(): v }))),
                    Err(e) => return fail(e),
                }
            }
            out
        }
        StreamEvent::Messages { chunk, metadata } => {
            let task_ns = metadata.task_ns();
            let mut meta = run_metadata.clone();
            meta.insert("langgraph_step".to_owned(), metadata.step.into());
            meta.insert("langgraph_node".to_owned(), (*metadata.node).into());
            meta.insert("langgraph_checkpoint_ns".to_owned(), task_ns.clone().into());
            meta.insert("checkpoint_ns".to_owned(), task_ns.into());
            meta.insert("langgraph_task_id".to_owned(), (*metadata.task_id).into());
            match serde_json::to_value(&chunk) {
                Ok(c) => vec![Emitted::message(&c, &Value::Object(meta))],
                Err(e) => fail(ServerError::Unprocessable(e.to_string())),
            }
        }
        StreamEvent::Custom { value, .. } => vec![Emitted::new("custom", value)],
        StreamEvent::Task(task) => vec![Emitted::task(task)],
        StreamEvent::Checkpoint { checkpoint_id, step, next } => {
            vec![Emitted::checkpoint(thread_id, &checkpoint_id, step, &next, last_values)]
        }
        StreamEvent::Interrupt(interrupts, _) => {
            let list: Vec<Value> = interrupts.iter().map(interrupt_json).collect();
            let mut out = Vec::new();
            if modes.contains(StreamMode::Updates) {
                out.push(Emitted::new("updates", json!({ "__interrupt__": list })));
            }
            if modes.contains(StreamMode::Values) && !list.is_empty() {
                let mut values = last_values.clone();
                if let Value::Object(map) = &mut values {
                    map.insert("__interrupt__".to_owned(), Value::Array(list));
                }
                out.push(Emitted::new("values", values));
            }
            out
        }
        _ => Vec::new(),
    }
}
