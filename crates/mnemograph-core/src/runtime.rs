//! [`Runtime`]: what a node may use besides the state.

use std::fmt;
use std::sync::Arc;

use crate::interrupt::{NodeInterrupt, Scratchpad};
use crate::messages::Message;
use crate::stream::{EventMetadata, StreamMode, StreamModes};

/// An event a node sends to the run's stream.
pub(crate) enum SideEvent {
    Custom(serde_json::Value),
    /// A chunk a model streamed.
    Message(Message),
    /// A whole message a node wrote, streamed unless a chunk with its id was.
    Written(Message),
}

pub(crate) type SideSink = Arc<dyn Fn(SideEvent, &EventMetadata) + Send + Sync>;

/// Per-task facts shared by every clone of a [`Runtime`].
pub(crate) struct TaskScope {
    pub(crate) scratchpad: parking_lot::Mutex<Scratchpad>,
    /// The fields of the step's state LangGraph would hand a subgraph (see `Channels::available_fields`).
    pub(crate) available: crate::state::FieldSet,
    /// The checkpoint this task's step started from (a subgraph's `parents` entry).
    pub(crate) checkpoint_id: Arc<str>,
    /// The run's checkpointer, inherited by subgraphs that have none.
    pub(crate) checkpointer: Option<Arc<dyn crate::checkpoint::DynCheckpointer>>,
    /// The graph's long-term store, if any.
    pub(crate) store: Option<Arc<dyn crate::store::DynStore>>,
    /// Enclosing graphs' checkpoints (namespace → id).
    pub(crate) parents: std::collections::BTreeMap<String, String>,
    pub(crate) recursion_limit: usize,
    /// The run's `RunConfig::configurable`, shared by every task of the run.
    pub(crate) configurable: Arc<serde_json::Map<String, serde_json::Value>>,
    pub(crate) metadata: EventMetadata,
    pub(crate) thread_id: Option<Arc<str>>,
    pub(crate) modes: StreamModes,
    pub(crate) sink: Option<SideSink>,
}

/// Handed to nodes that take a second argument: the run's context (LangGraph's `Runtime.context`),
/// facts about the task, and the stream writer.
pub struct Runtime<C = ()> {
    context: Arc<C>,
    scope: Arc<TaskScope>,
}

impl<C> Clone for Runtime<C> {
    fn clone(&self) -> Self {
        Self { context: Arc::clone(&self.context), scope: Arc::clone(&self.scope) }
    }
}

impl<C> fmt::Debug for Runtime<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("node", &self.scope.metadata.node)
            .field("step", &self.scope.metadata.step)
            .field("thread_id", &self.scope.thread_id)
            .finish_non_exhaustive()
    }
}

impl<C> Runtime<C> {
    pub(crate) fn new(context: Arc<C>, scope: Arc<TaskScope>) -> Self {
        Self { context, scope }
    }

    pub(crate) fn scope(&self) -> &TaskScope {
        &self.scope
    }

    /// The task's scope, shared, to read after the node has dropped its runtime.
    pub(crate) fn scope_arc(&self) -> Arc<TaskScope> {
        Arc::clone(&self.scope)
    }

    /// The context given with `CompiledGraph::with_context` (model clients, stores, ...).
    pub fn context(&self) -> &C {
        &self.context
    }
    /// The context, shared.
    pub fn context_arc(&self) -> Arc<C> {
        Arc::clone(&self.context)
    }
    /// The graph's long-term store (LangGraph's `runtime.store`), if it was compiled with one.
    pub fn store(&self) -> Option<&Arc<dyn crate::store::DynStore>> {
        self.scope.store.as_ref()
    }
    /// The node this task runs.
    pub fn node(&self) -> &str {
        &self.scope.metadata.node
    }
    /// The superstep.
    pub fn step(&self) -> i64 {
        self.scope.metadata.step
    }
    /// The task id (deterministic, as LangGraph computes it).
    pub fn task_id(&self) -> &str {
        &self.scope.metadata.task_id
    }
    /// The thread of the run, if it has one.
    pub fn thread_id(&self) -> Option<&str> {
        self.scope.thread_id.as_deref()
    }
    /// The run's configurable values ([`RunConfig::configurable`](crate::RunConfig::configurable),
    /// LangGraph's `config["configurable"]`). A run served by `mnemograph-server` with
    /// authentication finds the caller here as `langgraph_auth_user`.
    pub fn configurable(&self) -> &serde_json::Map<String, serde_json::Value> {
        &self.scope.configurable
    }
    /// Whether the stream carries `mode`; lets a node skip work nobody will see.
    pub fn is_streaming(&self, mode: StreamMode) -> bool {
        self.scope.modes.contains(mode)
    }

    /// Writes a custom value to the stream (LangGraph's `get_stream_writer()`); a no-op unless the
    /// run streams [`StreamMode::Custom`].
    pub fn write(&self, value: impl Into<serde_json::Value>) {
        if self.scope.modes.contains(StreamMode::Custom) {
            if let Some(sink) = &self.scope.sink {
                sink(SideEvent::Custom(value.into()), &self.scope.metadata);
            }
        }
    }

    /// Asks for human input (LangGraph's `interrupt(value)`). The first time, it returns
    /// [`NodeInterrupt::Pending`]: propagate it with `?`, and the run stops with this interrupt in
    /// [`RunOutcome::interrupts`](crate::RunOutcome::interrupts). When the run is resumed with a
    /// [`Resume`](crate::Resume) value, the node runs again **from the top**, and its k-th
    /// `interrupt` call returns the k-th resume value, decoded as `R`.
    ///
    /// Side effects before an `interrupt` call are repeated on resume; keep them idempotent or put
    /// them after the last `interrupt`.
    ///
    /// # Errors
    /// [`NodeInterrupt::Pending`] to stop the run; [`NodeInterrupt::InvalidResume`] when the resume
    /// value does not decode as `R`.
    pub fn interrupt<R: serde::de::DeserializeOwned>(
        &self,
        value: impl serde::Serialize,
    ) -> Result<R, NodeInterrupt> {
        let value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
        let resumed = self.scope.scratchpad.lock().next(value).map_err(NodeInterrupt::Pending)?;
        serde_json::from_value(resumed)
            .map_err(|e| NodeInterrupt::InvalidResume { id: String::new(), reason: e.to_string() })
    }

    /// Emits a model token chunk to the `messages` stream mode; a no-op unless the run streams
    /// [`StreamMode::Messages`]. Model adapters call this for each chunk they receive.
    pub fn stream_message(&self, chunk: Message) {
        if self.scope.modes.contains(StreamMode::Messages) {
            if let Some(sink) = &self.scope.sink {
                sink(SideEvent::Message(chunk), &self.scope.metadata);
            }
        }
    }
}
