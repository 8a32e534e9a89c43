//! Nodes as the engine sees them: one object-safe call from a state and a runtime to an output.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::command::NodeOutput;
use crate::error::BoxError;
use crate::runtime::Runtime;
use crate::State;

/// What calling a node returns.
pub(crate) type NodeFuture<S> = Pin<Box<dyn Future<Output = Result<NodeOutput<S>, BoxError>> + Send>>;

/// The object-safe form every node is erased to, so a graph has one type parameter per state.
pub(crate) trait ErasedNode<S: State, C>: Send + Sync {
    fn call(&self, state: S, runtime: Runtime<C>) -> NodeFuture<S>;

    /// The graph behind a subgraph node, for `get_state_with_subgraphs`. The engine does not know
    /// what a compiled graph is; the side that built the node downcasts it.
    fn subgraph(&self) -> Option<&dyn Any> {
        None
    }

    /// Whether the node's output can send control beyond its edges (a [`Command`]'s `goto`,
    /// pushes). `compile()`'s reachability check counts such a node as reaching every node, so
    /// the answer is `true` unless the output type rules it out.
    ///
    /// [`Command`]: crate::Command
    fn may_goto(&self) -> bool {
        true
    }
}

/// A node, erased. Build one with [`node`](crate::node) (needed only for
/// [`StateGraph::add_sequence`](crate::StateGraph::add_sequence)).
pub struct BoxedNode<S: State, C>(pub(crate) Arc<dyn ErasedNode<S, C>>);

impl<S: State, C> Clone for BoxedNode<S, C> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<S: State, C> fmt::Debug for BoxedNode<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BoxedNode")
    }
}
