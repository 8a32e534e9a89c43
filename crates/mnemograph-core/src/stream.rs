//! Stream modes and the events a run emits.

use std::fmt;
use std::sync::Arc;

use crate::messages::Message;
use crate::State;

/// What a stream carries (LangGraph's `stream_mode`). Several may be combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamMode {
    /// The whole state after the input and after each superstep.
    Values,
    /// Each node's update, as it finishes.
    Updates,
    /// Model token chunks emitted by nodes, with node metadata.
    Messages,
    /// Values nodes write with [`Runtime::write`](crate::Runtime::write).
    Custom,
    /// Task starts and results.
    Tasks,
    /// Checkpoints as they are created.
    Checkpoints,
    /// Everything: checkpoints, task starts and results.
    Debug,
}

impl StreamMode {
    const fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of [`StreamMode`]s.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamModes(u8);

impl StreamModes {
    /// No mode.
    pub const NONE: Self = Self(0);
    /// Whether `mode` is in the set (or implied by `Debug`).
    pub const fn contains(self, mode: StreamMode) -> bool {
        self.0 & mode.bit() != 0
    }
    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// Adds a mode.
    #[must_use]
    pub const fn with(self, mode: StreamMode) -> Self {
        Self(self.0 | mode.bit())
    }
}

impl fmt::Debug for StreamModes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let all = [
            StreamMode::Values,
            StreamMode::Updates,
            StreamMode::Messages,
            StreamMode::Custom,
            StreamMode::Tasks,
            StreamMode::Checkpoints,
            StreamMode::Debug,
        ];
        f.debug_set().entries(all.iter().filter(|m| self.contains(**m))).finish()
    }
}

impl From<StreamMode> for StreamModes {
    fn from(m: StreamMode) -> Self {
        Self::NONE.with(m)
    }
}

impl<const N: usize> From<[StreamMode; N]> for StreamModes {
    fn from(ms: [StreamMode; N]) -> Self {
        ms.into_iter().fold(Self::NONE, Self::with)
    }
}

impl From<&[StreamMode]> for StreamModes {
    fn from(ms: &[StreamMode]) -> Self {
        ms.iter().copied().fold(Self::NONE, Self::with)
    }
}

/// Where a message chunk or custom value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventMetadata {
    /// The node (`langgraph_node`).
    pub node: Arc<str>,
    /// The superstep (`langgraph_step`).
    pub step: i64,
    /// The task id.
    pub task_id: Arc<str>,
    /// The namespace of the graph that ran the node (`""` at the root).
    pub checkpoint_ns: Arc<str>,
}

impl EventMetadata {
    /// The namespace of the node's task, as LangGraph names it (`<node>:<task id>`, after the
    /// enclosing graph's namespace and `|`): a subgraph run by the task checkpoints under it.
    pub fn task_ns(&self) -> String {
        task_namespace(&self.checkpoint_ns, &self.node, &self.task_id)
    }
}

/// The namespace of the task `task_id` of `node` in the graph at namespace `parent`.
pub(crate) fn task_namespace(parent: &str, node: &str, task_id: &str) -> String {
    if parent.is_empty() {
        format!("{node}:{task_id}")
    } else {
        format!("{parent}|{node}:{task_id}")
    }
}

/// A task started or finished (stream modes `tasks` and `debug`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TaskEvent {
    /// A task is about to run.
    Start {
        /// Task id.
        id: String,
        /// Node.
        name: String,
        /// The channels that triggered it.
        triggers: Vec<String>,
        /// Superstep.
        step: i64,
    },
    /// A task finished.
    Result {
        /// Task id.
        id: String,
        /// Node.
        name: String,
        /// Its error, if it failed.
        error: Option<String>,
        /// Superstep.
        step: i64,
    },
}

/// One item of a run's stream.
#[non_exhaustive]
pub enum StreamEvent<S: State> {
    /// The state after the input or a superstep.
    Values(S),
    /// A node finished; its writes (several when it returned a list of updates).
    Updates {
        /// The node.
        node: String,
        /// Its updates, in order.
        updates: Vec<S::Update>,
    },
    /// A model token chunk emitted by a node.
    Messages {
        /// The chunk (an AI message holding the new text).
        chunk: Message,
        /// Which node and step emitted it.
        metadata: EventMetadata,
    },
    /// A value written by a node with [`Runtime::write`](crate::Runtime::write).
    Custom {
        /// The value.
        value: serde_json::Value,
        /// Which node and step wrote it.
        metadata: EventMetadata,
    },
    /// A task started or finished.
    Task(TaskEvent),
    /// A checkpoint was created.
    Checkpoint {
        /// Its id.
        checkpoint_id: String,
        /// Its step.
        step: i64,
        /// The nodes that run next.
        next: Vec<String>,
    },
    /// The run stopped at interrupts or at a static breakpoint; resume it with
    /// [`CompiledGraph::resume`](crate::CompiledGraph::resume).
    Interrupt(Vec<crate::Interrupt>, Option<crate::Breakpoint>),
}

impl<S: State + fmt::Debug> fmt::Debug for StreamEvent<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Values(s) => f.debug_tuple("Values").field(s).finish(),
            Self::Updates { node, updates } => {
                f.debug_struct("Updates").field("node", node).field("updates", updates).finish()
            }
            Self::Messages { chunk, metadata } => {
                f.debug_struct("Messages").field("chunk", chunk).field("metadata", metadata).finish()
            }
            Self::Custom { value, metadata } => {
                f.debug_struct("Custom").field("value", value).field("metadata", metadata).finish()
            }
            Self::Task(t) => f.debug_tuple("Task").field(t).finish(),
            Self::Checkpoint { checkpoint_id, step, next } => f
                .debug_struct("Checkpoint")
                .field("checkpoint_id", checkpoint_id)
                .field("step", step)
                .field("next", next)
                .finish(),
            Self::Interrupt(i, b) => f.debug_tuple("Interrupt").field(i).field(b).finish(),
        }
    }
}
