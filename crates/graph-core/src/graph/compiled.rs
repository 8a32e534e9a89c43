//! [`CompiledGraph`]: the runnable graph, and the channel layout the engine uses.

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::branch::PathFn;
use super::builder::{StateGraph, END, START};
use super::node::BoxedNode;
use crate::checkpoint::{Checkpointer, DynCheckpointer};
use crate::error::{Error, GraphIssue, Result};
use crate::retry::RetryPolicy;
use crate::state::State;

/// Name of the channel that carries pushes (LangGraph's `TASKS`).
pub(crate) const TASKS: &str = "__pregel_tasks";

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

#[derive(Debug)]
pub(crate) struct ChannelSpec {
    pub(crate) name: Arc<str>,
    pub(crate) kind: ChannelKind,
}

pub(crate) struct Branch<S> {
    pub(crate) path: PathFn<S>,
    pub(crate) path_map: Option<HashMap<String, String>>,
}

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
}

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

fn build_layout<S: State, C>(g: StateGraph<S, C>) -> Layout<S, C> {
    let mut channels: Vec<ChannelSpec> = S::FIELDS
        .iter()
        .enumerate()
        .map(|(i, f)| ChannelSpec { name: f.name.into(), kind: ChannelKind::Field(i) })
        .collect();
    let add = |channels: &mut Vec<ChannelSpec>, name: String, kind| {
        channels.push(ChannelSpec { name: name.into(), kind });
        channels.len() - 1
    };
    let start_channel = add(&mut channels, START.to_owned(), ChannelKind::Start);

    // Node 0 is START; user nodes follow in insertion order.
    let mut nodes: Vec<NodeDef<S, C>> = vec![NodeDef {
        name: START.into(),
        node: None,
        triggers: vec![start_channel],
        trigger_names: Arc::from([]),
        trigger_order: Vec::new(),
        pull_suffix: Vec::new(),
        pull_path: Arc::from(""),
        edges: Vec::new(),
        joins: Vec::new(),
        branches: Vec::new(),
        retry: None,
    }];
    let mut route_channel = vec![start_channel];
    for spec in g.nodes {
        let kind = if spec.options.defer { ChannelKind::Deferred } else { ChannelKind::Branch };
        let ch = add(&mut channels, format!("branch:to:{}", spec.name), kind);
        route_channel.push(ch);
        let name: Arc<str> = spec.name.into();
        nodes.push(NodeDef {
            trigger_names: Arc::from([]),
            trigger_order: Vec::new(),
            pull_suffix: Vec::new(),
            pull_path: Arc::from(""),
            name,
            node: Some(spec.node),
            triggers: vec![ch],
            edges: Vec::new(),
            joins: Vec::new(),
            branches: Vec::new(),
            retry: spec.options.retry,
        });
    }
    let node_index: HashMap<Arc<str>, usize> =
        nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect();

    for (from, to) in g.edges {
        if to == END {
            continue;
        }
        let (f, t) = (node_index[from.as_str()], node_index[to.as_str()]);
        let ch = route_channel[t];
        if !nodes[f].edges.contains(&ch) {
            nodes[f].edges.push(ch);
        }
    }
    for (sources, to) in g.joins {
        // LangGraph's name: `join:<a>+<b>:<c>`, sources in the order given.
        let name = format!("join:{}:{}", sources.join("+"), to);
        let ch = add(&mut channels, name, ChannelKind::Join { sources: sources.clone() });
        if to != END {
            let t = node_index[to.as_str()];
            nodes[t].triggers.push(ch);
        }
        for (bit, s) in sources.iter().enumerate() {
            nodes[node_index[s.as_str()]].joins.push((ch, 1 << bit));
        }
    }
    for b in g.branches {
        let f = node_index[b.source.as_str()];
        nodes[f]
            .branches
            .push(Branch { path: b.path, path_map: b.path_map.map(|m| m.into_iter().collect()) });
    }
    for n in &mut nodes {
        let mut names: Vec<Arc<str>> = n.triggers.iter().map(|t| channels[*t].name.clone()).collect();
        names.sort();
        n.pull_suffix = [n.name.as_bytes(), crate::pregel::task::PULL.as_bytes()]
            .into_iter()
            .chain(names.iter().map(|t| t.as_bytes()))
            .flatten()
            .copied()
            .collect();
        n.pull_path = format!("~{}, {}", crate::pregel::task::PULL, n.name).into();
        n.trigger_names = names.into();
        n.trigger_order = (0..n.triggers.len()).collect();
        n.trigger_order.sort_by(|a, b| channels[n.triggers[*a]].name.cmp(&channels[n.triggers[*b]].name));
    }
    let tasks_channel = add(&mut channels, TASKS.to_owned(), ChannelKind::Tasks);
    let mut is_trigger = vec![false; channels.len()];
    for n in &nodes {
        for t in &n.triggers {
            is_trigger[*t] = true;
        }
    }
    is_trigger[tasks_channel] = true;
    let channel_index = channels.iter().enumerate().map(|(i, c)| (c.name.clone(), i)).collect();
    let mut channel_order: Vec<usize> = (0..channels.len()).collect();
    channel_order.sort_by(|a, b| channels[*a].name.cmp(&channels[*b].name));
    let interrupt_before = g.interrupt_before.iter().map(|n| node_index[n.as_str()]).collect();
    let interrupt_after = g.interrupt_after.iter().map(|n| node_index[n.as_str()]).collect();
    Layout {
        channels,
        channel_index,
        channel_order,
        nodes,
        node_index,
        route_channel,
        start_channel,
        tasks_channel,
        is_trigger,
        interrupt_before,
        interrupt_after,
    }
}

pub(crate) struct Inner<S: State, C> {
    pub(crate) layout: Layout<S, C>,
    pub(crate) drawing: super::draw::Drawing,
    pub(crate) warnings: Vec<GraphIssue>,
}

/// A validated, runnable graph. Cheap to clone (shares everything).
pub struct CompiledGraph<S: State, C = ()> {
    pub(crate) inner: Arc<Inner<S, C>>,
    pub(crate) checkpointer: Option<Arc<dyn DynCheckpointer>>,
    pub(crate) context: Option<Arc<C>>,
    pub(crate) store: Option<Arc<dyn crate::store::DynStore>>,
}

impl<S: State, C> Clone for CompiledGraph<S, C> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            checkpointer: self.checkpointer.clone(),
            context: self.context.clone(),
            store: self.store.clone(),
        }
    }
}

impl<S: State, C> fmt::Debug for CompiledGraph<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nodes: Vec<&str> = self.inner.layout.nodes.iter().map(|n| &*n.name).collect();
        f.debug_struct("CompiledGraph")
            .field("nodes", &nodes)
            .field("checkpointer", &self.checkpointer.is_some())
            .finish_non_exhaustive()
    }
}

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    pub(crate) fn build(g: StateGraph<S, C>, warnings: Vec<GraphIssue>) -> Self {
        let drawing = super::draw::Drawing::of(&g);
        Self {
            inner: Arc::new(Inner { layout: build_layout(g), drawing, warnings }),
            checkpointer: None,
            context: None,
            store: None,
        }
    }

    /// The same graph, persisting to `checkpointer`.
    #[must_use]
    pub fn with_checkpointer(mut self, checkpointer: impl Checkpointer) -> Self {
        self.checkpointer = Some(Arc::new(checkpointer));
        self
    }

    /// The same graph, persisting to a shared checkpointer.
    #[must_use]
    pub fn with_shared_checkpointer(mut self, checkpointer: Arc<dyn DynCheckpointer>) -> Self {
        self.checkpointer = Some(checkpointer);
        self
    }

    /// The same graph, giving nodes a long-term [`Store`](crate::store::Store) through
    /// [`Runtime::store`](crate::Runtime::store) (LangGraph's `compile(store=...)`).
    #[must_use]
    pub fn with_store(mut self, store: impl crate::store::Store) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// The same graph, with a shared store.
    #[must_use]
    pub fn with_shared_store(mut self, store: Arc<dyn crate::store::DynStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The same graph, handing `context` to nodes through [`Runtime::context`](crate::Runtime::context).
    #[must_use]
    pub fn with_context(mut self, context: C) -> Self {
        self.context = Some(Arc::new(context));
        self
    }

    /// The checkpointer, if any.
    pub fn checkpointer(&self) -> Option<&Arc<dyn DynCheckpointer>> {
        self.checkpointer.as_ref()
    }

    /// What [`StateGraph::compile`] warned about: nodes no run can reach and loops no run can
    /// leave ([`GraphIssue::UnreachableNode`], [`GraphIssue::EndlessLoop`]). Empty for a sound
    /// graph. A caller that wants them to be errors turns a non-empty list into
    /// [`Error::InvalidGraph`].
    pub fn warnings(&self) -> &[GraphIssue] {
        &self.inner.warnings
    }

    /// Node names, START first.
    pub fn node_names(&self) -> impl Iterator<Item = &str> {
        self.inner.layout.nodes.iter().map(|n| &*n.name)
    }

    pub(crate) fn context_or_unit(&self) -> Result<Arc<C>> {
        if let Some(c) = &self.context {
            return Ok(Arc::clone(c));
        }
        // Graphs whose nodes take no context use `()`, which needs no `with_context`.
        let unit: Arc<dyn Any + Send + Sync> = Arc::new(());
        unit.downcast::<C>().map_err(|_| Error::MissingContext(std::any::type_name::<C>()))
    }
}
