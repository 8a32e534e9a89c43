//! [`StateGraph`]: the builder.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use super::branch::{BranchSpec, IntoPathMap, RouteShape};
use super::node::IntoNode;
use crate::command::Route;
use crate::error::GraphIssue;
use crate::pregel::node::BoxedNode;
use crate::retry::RetryPolicy;
use crate::State;

/// Per-node options (LangGraph's `add_node` keyword arguments).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct NodeOptions {
    /// Retry the node on failure.
    pub retry: Option<RetryPolicy>,
    /// Run only when nothing else is left to run (a barrier for branches of unequal length).
    pub defer: bool,
    /// Run the node on a thread of the runtime's blocking pool (see [`blocking`](Self::blocking)).
    pub blocking: bool,
}

impl NodeOptions {
    /// No retry, not deferred, not blocking.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the retry policy.
    #[must_use]
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }
    /// Makes the node deferred.
    #[must_use]
    pub fn defer(mut self) -> Self {
        self.defer = true;
        self
    }
    /// Runs the node's future on a thread of tokio's blocking pool (`spawn_blocking`), for nodes
    /// that compute for long or call blocking APIs between their awaits: LangGraph runs a sync
    /// node in an executor thread, and this is the same for an async one. The thread drives the
    /// node with [`Handle::block_on`](tokio::runtime::Handle::block_on), so the node may still
    /// await timers and I/O, and the runtime's own threads stay free for the other tasks of the
    /// step and for the rest of the program.
    ///
    /// It works on both runtime flavours. On a current-thread runtime the thread that runs the
    /// graph keeps driving timers and I/O while it waits for the node, so a blocking node there
    /// neither stalls its siblings nor deadlocks. Outside a tokio runtime the node runs in place.
    /// Dropping the run stops the node at its next await; code that never awaits runs to its end
    /// on its thread.
    #[must_use]
    pub fn blocking(mut self) -> Self {
        self.blocking = true;
        self
    }
}

pub(crate) struct NodeSpec<S: State, C> {
    pub(crate) name: String,
    pub(crate) node: BoxedNode<S, C>,
    pub(crate) options: NodeOptions,
}

/// A graph over a typed state `S`, whose nodes may take a context `C` (LangGraph's `StateGraph`).
///
/// Builder methods never panic: problems are collected and reported together by
/// [`compile`](Self::compile).
pub struct StateGraph<S: State, C = ()> {
    pub(crate) nodes: Vec<NodeSpec<S, C>>,
    pub(crate) edges: Vec<(String, String)>,
    pub(crate) joins: Vec<(Vec<String>, String)>,
    pub(crate) branches: Vec<BranchSpec<S>>,
    pub(crate) interrupt_before: Vec<String>,
    pub(crate) interrupt_after: Vec<String>,
    pub(crate) issues: Vec<GraphIssue>,
    _context: PhantomData<fn(C)>,
}

impl<S: State, C> fmt::Debug for StateGraph<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateGraph")
            .field("nodes", &self.nodes.iter().map(|n| &n.name).collect::<Vec<_>>())
            .field("edges", &self.edges)
            .field("joins", &self.joins)
            .field("branches", &self.branches.iter().map(|b| &b.source).collect::<Vec<_>>())
            .finish()
    }
}

impl<S: State, C: Send + Sync + 'static> Default for StateGraph<S, C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: State, C: Send + Sync + 'static> StateGraph<S, C> {
    /// An empty graph.
    pub fn new() -> Self {
        Self {
            nodes: Vec::new(),
            edges: Vec::new(),
            joins: Vec::new(),
            branches: Vec::new(),
            interrupt_before: Vec::new(),
            interrupt_after: Vec::new(),
            issues: Vec::new(),
            _context: PhantomData,
        }
    }

    /// Adds a node: `async fn(S) -> Result<O, E>` or `async fn(S, Runtime<C>) -> Result<O, E>`.
    #[must_use]
    pub fn add_node<M>(self, name: impl Into<String>, node: impl IntoNode<S, C, M>) -> Self {
        self.add_node_with(name, node, NodeOptions::default())
    }

    /// Adds a node with options (retry policy, deferral).
    #[must_use]
    pub fn add_node_with<M>(
        mut self,
        name: impl Into<String>,
        node: impl IntoNode<S, C, M>,
        options: NodeOptions,
    ) -> Self {
        let name = name.into();
        if self.nodes.iter().any(|n| n.name == name) {
            self.issues.push(GraphIssue::DuplicateNode(name));
            return self;
        }
        self.nodes.push(NodeSpec { name, node: node.into_node(), options });
        self
    }

    /// Adds an edge: `to` runs in the superstep after `from`.
    #[must_use]
    pub fn add_edge(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.edges.push((from.into(), to.into()));
        self
    }

    /// Adds a join edge: `to` runs once, after every node of `from` has run
    /// (LangGraph's `add_edge([a, b], c)`).
    #[must_use]
    pub fn add_join<I, T>(mut self, from: I, to: impl Into<String>) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        let from: Vec<String> = from.into_iter().map(Into::into).collect();
        let to = to.into();
        if let [single] = from.as_slice() {
            self.edges.push((single.clone(), to));
        } else {
            self.joins.push((from, to));
        }
        self
    }

    /// Adds nodes and chains them with edges, in order.
    #[must_use]
    pub fn add_sequence<I, N>(mut self, nodes: I) -> Self
    where
        I: IntoIterator<Item = (N, BoxedNode<S, C>)>,
        N: Into<String>,
    {
        let mut previous: Option<String> = None;
        for (name, node) in nodes {
            let name = name.into();
            self = self.add_node(name.clone(), node);
            if let Some(prev) = previous.replace(name.clone()) {
                self = self.add_edge(prev, name);
            }
        }
        self
    }

    /// Adds a conditional edge: after `source` runs, `path` reads the state (including `source`'s
    /// own writes) and names the next node(s), `END`, or [`Push`](crate::Push)es. With a path map,
    /// the names it returns are keys of the map.
    #[must_use]
    pub fn add_conditional_edges<R, F>(
        mut self,
        source: impl Into<String>,
        path: F,
        path_map: impl IntoPathMap,
    ) -> Self
    where
        F: Fn(&S) -> R + Send + Sync + 'static,
        R: Into<Route<S>> + 'static,
    {
        self.branches.push(BranchSpec {
            source: source.into(),
            path: Arc::new(move |s| path(s).into()),
            path_map: path_map.into_path_map(),
            shape: RouteShape::of::<R>(),
        });
        self
    }

    /// Stops every run before these nodes (static breakpoints).
    #[must_use]
    pub fn interrupt_before<I, T>(mut self, nodes: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.interrupt_before.extend(nodes.into_iter().map(Into::into));
        self
    }

    /// Stops every run after these nodes (static breakpoints).
    #[must_use]
    pub fn interrupt_after<I, T>(mut self, nodes: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.interrupt_after.extend(nodes.into_iter().map(Into::into));
        self
    }
}
