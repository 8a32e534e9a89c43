//! [`CompiledGraph`]: a validated graph, ready to run (LangGraph's `CompiledStateGraph`, which
//! extends the engine's `Pregel` with what the builder knows: its drawing and its warnings).

use std::fmt;
use std::sync::Arc;

use super::draw::Drawing;
use crate::checkpoint::{Checkpointer, DynCheckpointer};
use crate::error::GraphIssue;
use crate::pregel::Pregel;
use crate::State;

/// What the builder knew of the graph, kept beside the plan.
pub(crate) struct Built {
    pub(crate) drawing: Drawing,
    pub(crate) warnings: Vec<GraphIssue>,
}

/// A validated, runnable graph. Cheap to clone (shares everything).
pub struct CompiledGraph<S: State, C = ()> {
    pub(crate) pregel: Pregel<S, C>,
    pub(crate) built: Arc<Built>,
}

impl<S: State, C> Clone for CompiledGraph<S, C> {
    fn clone(&self) -> Self {
        Self { pregel: self.pregel.clone(), built: Arc::clone(&self.built) }
    }
}

impl<S: State, C> fmt::Debug for CompiledGraph<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nodes: Vec<&str> = self.pregel.layout.nodes.iter().map(|n| &*n.name).collect();
        f.debug_struct("CompiledGraph")
            .field("nodes", &nodes)
            .field("checkpointer", &self.pregel.checkpointer.is_some())
            .finish_non_exhaustive()
    }
}

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    /// The same graph under another name: the `graph.name` of its runs' spans (LangGraph's
    /// `compile(name=...)`; `"LangGraph"` unless set).
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.pregel.name = Arc::from(name.into());
        self
    }

    /// The graph's name (see [`with_name`](Self::with_name)).
    pub fn name(&self) -> &str {
        &self.pregel.name
    }

    /// The same graph, persisting to `checkpointer`.
    #[must_use]
    pub fn with_checkpointer(mut self, checkpointer: impl Checkpointer) -> Self {
        self.pregel.checkpointer = Some(Arc::new(checkpointer));
        self
    }

    /// The same graph, persisting to a shared checkpointer.
    #[must_use]
    pub fn with_shared_checkpointer(mut self, checkpointer: Arc<dyn DynCheckpointer>) -> Self {
        self.pregel.checkpointer = Some(checkpointer);
        self
    }

    /// The same graph, giving nodes a long-term [`Store`](crate::store::Store) through
    /// [`Runtime::store`](crate::Runtime::store) (LangGraph's `compile(store=...)`).
    #[must_use]
    pub fn with_store(mut self, store: impl crate::store::Store) -> Self {
        self.pregel.store = Some(Arc::new(store));
        self
    }

    /// The same graph, with a shared store.
    #[must_use]
    pub fn with_shared_store(mut self, store: Arc<dyn crate::store::DynStore>) -> Self {
        self.pregel.store = Some(store);
        self
    }

    /// The same graph, handing `context` to nodes through [`Runtime::context`](crate::Runtime::context).
    #[must_use]
    pub fn with_context(mut self, context: C) -> Self {
        self.pregel.context = Some(Arc::new(context));
        self
    }

    /// The same graph, choosing whether the tasks of a superstep may be spawned (default `true`).
    ///
    /// On a multi-thread tokio runtime, a superstep of several tasks spawns each on the
    /// runtime's workers, so nodes that compute run in parallel and a node that blocks its thread
    /// stalls none of its siblings (LangGraph runs a step's sync nodes in a thread pool). Writes
    /// are still applied in task-path order, whatever order the tasks finish in, and dropping the
    /// run aborts its spawned tasks. A step of one task, and every step on a current-thread
    /// runtime, runs in the run's own future.
    ///
    /// `false` keeps every task in the run's own future, polled concurrently on the thread that
    /// polls the run: for nodes that read a tokio `task_local!` or a thread-local value set
    /// around the call to `invoke`, which a spawned task does not see, or that must never run
    /// on two threads at once. Nodes marked [`NodeOptions::blocking`](crate::NodeOptions::blocking)
    /// still run on a blocking thread.
    #[must_use]
    pub fn with_spawned_tasks(mut self, spawn: bool) -> Self {
        self.pregel.spawn_tasks = spawn;
        self
    }

    /// The checkpointer, if any.
    pub fn checkpointer(&self) -> Option<&Arc<dyn DynCheckpointer>> {
        self.pregel.checkpointer.as_ref()
    }

    /// What [`StateGraph::compile`](crate::StateGraph::compile) warned about: nodes no run can reach and loops no run can
    /// leave ([`GraphIssue::UnreachableNode`], [`GraphIssue::EndlessLoop`]). Empty for a sound
    /// graph. A caller that wants them to be errors turns a non-empty list into
    /// [`Error::InvalidGraph`](crate::Error::InvalidGraph).
    pub fn warnings(&self) -> &[GraphIssue] {
        &self.built.warnings
    }

    /// Node names, START first.
    pub fn node_names(&self) -> impl Iterator<Item = &str> {
        self.pregel.layout.nodes.iter().map(|n| &*n.name)
    }

    /// Whether a node of this graph is a compiled graph added as a node (a subgraph), whose runs
    /// stream under their own namespaces in LangGraph.
    pub fn has_subgraphs(&self) -> bool {
        self.pregel.layout.nodes.iter().any(|n| n.node.as_ref().is_some_and(|n| n.0.subgraph().is_some()))
    }

    /// The subgraphs of this graph with their namespaces, in node order (LangGraph's
    /// `get_subgraphs`): a subgraph's namespace is its node's name, a nested one's the names on
    /// the way joined by `|`. `recurse` goes into subgraphs of subgraphs; `namespace` keeps only
    /// the subgraph at exactly that namespace (a nested one is found only with `recurse`).
    ///
    /// ```
    /// use mnemograph_core::prelude::*;
    /// # #[derive(State, Clone, Default, Debug)] struct S { n: u32 }
    /// let inner = StateGraph::<S>::new()
    ///     .add_node("a", |_: S| async { Ok::<_, Error>(SUpdate::n(1_u32)) })
    ///     .add_edge(START, "a")
    ///     .compile()?;
    /// let outer = StateGraph::<S>::new().add_node("inner", inner).add_edge(START, "inner").compile()?;
    /// let found: Vec<String> = outer.get_subgraphs(None, false).into_iter().map(|(ns, _)| ns).collect();
    /// assert_eq!(found, ["inner"]);
    /// assert!(outer.get_subgraphs(Some("other"), true).is_empty());
    /// # Ok::<(), mnemograph_core::Error>(())
    /// ```
    pub fn get_subgraphs(&self, namespace: Option<&str>, recurse: bool) -> Vec<(String, Self)> {
        let mut found = Vec::new();
        for def in &self.pregel.layout.nodes {
            let name = &*def.name;
            let rest = match namespace {
                None => None,
                Some(ns) if ns == name => Some(""),
                Some(ns) => match ns.strip_prefix(name).and_then(|r| r.strip_prefix(NS_SEP)) {
                    Some(rest) => Some(rest),
                    None => continue,
                },
            };
            let child = def.node.as_ref().and_then(|n| n.0.subgraph()).and_then(|g| g.downcast_ref::<Self>());
            let Some(child) = child else { continue };
            if rest == Some("") {
                return vec![(name.to_owned(), child.clone())];
            }
            if rest.is_none() {
                found.push((name.to_owned(), child.clone()));
            }
            if recurse {
                let nested = child.get_subgraphs(rest, true);
                found.extend(nested.into_iter().map(|(ns, g)| (format!("{name}{NS_SEP}{ns}"), g)));
            }
        }
        found
    }
}

/// What joins the node names of a nested subgraph's namespace, as LangGraph joins them.
const NS_SEP: char = '|';
