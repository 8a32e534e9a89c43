//! Per-run configuration (LangGraph's `config`).

use std::time::Duration;

use crate::checkpoint::CheckpointConfig;

/// LangGraph's default recursion limit (`LANGGRAPH_DEFAULT_RECURSION_LIMIT`).
pub const DEFAULT_RECURSION_LIMIT: usize = 10_007;

/// When checkpoints are written (LangGraph's `durability`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// Each checkpoint is saved before the next superstep starts.
    #[default]
    Sync,
    /// Each checkpoint is saved while the next superstep runs; the run waits for the last save
    /// before it returns. A crash may lose the newest checkpoint (the one still being saved), never
    /// an older one.
    Async,
    /// Only the final checkpoint is saved (no pending writes mid-run).
    Exit,
}

/// Configuration of one run: which thread, which checkpoint, limits and metadata.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunConfig {
    /// The thread (conversation) whose checkpoints the run reads and writes.
    pub thread_id: Option<String>,
    /// The namespace: `""` for the root graph.
    pub checkpoint_ns: String,
    /// Start from this checkpoint instead of the latest (time travel: the run forks).
    pub checkpoint_id: Option<String>,
    /// Maximum number of supersteps.
    pub recursion_limit: usize,
    /// Extra metadata written into every checkpoint of the run (e.g. `run_id`, `user_id`).
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// Values the run's nodes read through [`Runtime::configurable`](crate::Runtime::configurable):
    /// LangGraph's `config["configurable"]` beyond the thread and checkpoint (a model name, the
    /// caller's identity as a server authenticated it, ...). Subgraphs see the same values.
    pub configurable: serde_json::Map<String, serde_json::Value>,
    /// When checkpoints are written.
    pub durability: Durability,
    /// Stop before these nodes run (this run only).
    pub interrupt_before: Vec<String>,
    /// Stop after these nodes run (this run only).
    pub interrupt_after: Vec<String>,
    /// Upper bound on one node attempt, if any.
    pub node_timeout: Option<Duration>,
    /// Enclosing graphs' checkpoints, namespace → id (set for subgraph runs).
    pub(crate) parents: std::collections::BTreeMap<String, String>,
    /// Whether the run's resume value is the parent graph's (a subgraph resumed with its parent):
    /// it is saved in the parent's writes, not again in the subgraph's.
    pub(crate) resume_from_parent: bool,
    /// The fields an [`Input::State`](crate::Input::State) writes (every field when `None`): a
    /// subgraph receives only the fields its parent has.
    pub(crate) input_fields: Option<crate::state::FieldSet>,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            thread_id: None,
            checkpoint_ns: String::new(),
            checkpoint_id: None,
            recursion_limit: DEFAULT_RECURSION_LIMIT,
            metadata: serde_json::Map::new(),
            configurable: serde_json::Map::new(),
            durability: Durability::default(),
            interrupt_before: Vec::new(),
            interrupt_after: Vec::new(),
            node_timeout: None,
            parents: std::collections::BTreeMap::new(),
            resume_from_parent: false,
            input_fields: None,
        }
    }
}

impl RunConfig {
    /// A config with no thread (nothing is persisted).
    pub fn new() -> Self {
        Self::default()
    }
    /// A config for `thread_id`.
    pub fn thread(thread_id: impl Into<String>) -> Self {
        Self { thread_id: Some(thread_id.into()), ..Self::default() }
    }
    /// Starts from a given checkpoint (time travel).
    #[must_use]
    pub fn checkpoint_id(mut self, checkpoint_id: impl Into<String>) -> Self {
        self.checkpoint_id = Some(checkpoint_id.into());
        self
    }
    /// Sets the recursion limit.
    #[must_use]
    pub fn recursion_limit(mut self, limit: usize) -> Self {
        self.recursion_limit = limit;
        self
    }
    /// Sets the durability mode.
    #[must_use]
    pub fn durability(mut self, durability: Durability) -> Self {
        self.durability = durability;
        self
    }
    /// Adds a metadata key written into every checkpoint of the run.
    #[must_use]
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
    /// Adds a value the run's nodes read through
    /// [`Runtime::configurable`](crate::Runtime::configurable).
    #[must_use]
    pub fn configurable(mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) -> Self {
        self.configurable.insert(key.into(), value.into());
        self
    }
    /// Stops this run before `nodes` (in addition to the graph's compile-time breakpoints).
    #[must_use]
    pub fn interrupt_before<I: IntoIterator<Item = T>, T: Into<String>>(mut self, nodes: I) -> Self {
        self.interrupt_before.extend(nodes.into_iter().map(Into::into));
        self
    }
    /// Stops this run after `nodes` (in addition to the graph's compile-time breakpoints).
    #[must_use]
    pub fn interrupt_after<I: IntoIterator<Item = T>, T: Into<String>>(mut self, nodes: I) -> Self {
        self.interrupt_after.extend(nodes.into_iter().map(Into::into));
        self
    }
    /// Bounds every node attempt by `timeout`; an attempt that takes longer fails (and is retried
    /// by the node's retry policy).
    #[must_use]
    pub fn node_timeout(mut self, timeout: Duration) -> Self {
        self.node_timeout = Some(timeout);
        self
    }

    /// The checkpoint address of this config, if it has a thread.
    pub fn checkpoint_config(&self) -> Option<CheckpointConfig> {
        self.thread_id.as_ref().map(|t| CheckpointConfig {
            thread_id: t.clone(),
            checkpoint_ns: self.checkpoint_ns.clone(),
            checkpoint_id: self.checkpoint_id.clone(),
        })
    }
}

impl From<&CheckpointConfig> for RunConfig {
    fn from(c: &CheckpointConfig) -> Self {
        Self {
            thread_id: Some(c.thread_id.clone()),
            checkpoint_ns: c.checkpoint_ns.clone(),
            checkpoint_id: c.checkpoint_id.clone(),
            ..Self::default()
        }
    }
}
