//! The plan the engine runs: channels, nodes, their triggers and routes (what LangGraph's
//! `CompiledStateGraph` hands to `Pregel`). The builder lowers a graph into it; the engine reads it
//! and never sees the builder.

use std::collections::HashMap;
use std::sync::Arc;

use super::node::BoxedNode;
use crate::command::Route;
use crate::retry::RetryPolicy;
use crate::State;

/// A routing function of a conditional edge.
pub(crate) type PathFn<S> = Arc<dyn Fn(&S) -> Route<S> + Send + Sync>;

/// What a channel is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChannelKind {
    /// A state field (index into `S::FIELDS`).
    Field(usize),
    /// `__start__`: the run's input, for one superstep.
    Start,
    /// `branch:to:<node>`: an ephemeral trigger.
    Branch,
    /// `branch:to:<node>` of a deferred node: available only once the graph would otherwise finish.
    Deferred,
    /// `join:<a>+<b>:<c>`: available once every source wrote; `sources` in bit order.
    Join { sources: Vec<String> },
    /// `__pregel_tasks`: pushes for the next superstep.
    Tasks,
}

/// A channel of the plan: its checkpoint name and what it is.
#[derive(Debug)]
pub(crate) struct ChannelSpec {
    pub(crate) name: Arc<str>,
    pub(crate) kind: ChannelKind,
}

/// A conditional edge: the routing function and its path map (routing keys to node names).
pub(crate) struct Branch<S> {
    pub(crate) path: PathFn<S>,
    pub(crate) path_map: Option<HashMap<String, String>>,
}

/// A node of the plan: what it runs, what triggers it and where its output goes.
pub(crate) struct NodeDef<S: State, C> {
    pub(crate) name: Arc<str>,
    /// `None` for START, whose "work" is writing the input.
    pub(crate) node: Option<BoxedNode<S, C>>,
    /// Channels that trigger this node.
    pub(crate) triggers: Vec<usize>,
    /// Trigger channel names, sorted (they feed the task id).
    pub(crate) trigger_names: Arc<[Arc<str>]>,
    /// Positions in `triggers` in the order of their channels' names, the order of a
    /// checkpoint's `versions_seen` entry.
    pub(crate) trigger_order: Vec<usize>,
    /// `name ‖ "__pregel_pull" ‖ sorted triggers`: the fixed tail of this node's task-id input.
    pub(crate) pull_suffix: Vec<u8>,
    /// `"~__pregel_pull, <name>"`, this node's task path.
    pub(crate) pull_path: Arc<str>,
    /// Edge channels written after the node runs.
    pub(crate) edges: Vec<usize>,
    /// Join channels written after the node runs, with this node's bit.
    pub(crate) joins: Vec<(usize, u64)>,
    pub(crate) branches: Vec<Branch<S>>,
    pub(crate) retry: Option<RetryPolicy>,
    /// Whether the node runs on a blocking thread (`NodeOptions::blocking`).
    pub(crate) blocking: bool,
}

/// The whole plan, channels and nodes addressed by index so a superstep touches no map.
pub(crate) struct Layout<S: State, C> {
    pub(crate) channels: Vec<ChannelSpec>,
    pub(crate) channel_index: HashMap<Arc<str>, usize>,
    /// Channel indexes in the order of their names, the order of a checkpoint's maps.
    pub(crate) channel_order: Vec<usize>,
    pub(crate) nodes: Vec<NodeDef<S, C>>,
    pub(crate) node_index: HashMap<Arc<str>, usize>,
    /// For each node, the channel that routes to it (`branch:to:<node>`).
    pub(crate) route_channel: Vec<usize>,
    pub(crate) start_channel: usize,
    pub(crate) tasks_channel: usize,
    /// Whether a channel triggers some node (decides when deferred nodes may run).
    pub(crate) is_trigger: Vec<bool>,
    pub(crate) interrupt_before: Vec<usize>,
    pub(crate) interrupt_after: Vec<usize>,
}

impl<S: State, C> Layout<S, C> {
    pub(crate) fn node(&self, name: &str) -> Option<usize> {
        self.node_index.get(name).copied()
    }
}
