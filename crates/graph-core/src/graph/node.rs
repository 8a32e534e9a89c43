//! Turning plain async fns into nodes.
//!
//! A node is `async fn(S) -> Result<O, E>` or `async fn(S, Runtime<C>) -> Result<O, E>` where `O`
//! is any [`IntoNodeOutput`] and `E: Into<BoxError>`. The marker parameter `M` of [`IntoNode`]
//! only keeps the two blanket impls apart (the same trick axum uses for handlers).

use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::command::{IntoNodeOutput, NodeOutput};
use crate::error::BoxError;
use crate::runtime::Runtime;
use crate::state::State;

pub(crate) type NodeFuture<S> = Pin<Box<dyn Future<Output = Result<NodeOutput<S>, BoxError>> + Send>>;

/// The object-safe form every node is erased to, so a graph has one type parameter per state.
pub(crate) trait ErasedNode<S: State, C>: Send + Sync {
    fn call(&self, state: S, runtime: Runtime<C>) -> NodeFuture<S>;

    /// The compiled graph behind a subgraph node (for `get_state_with_subgraphs`).
    fn subgraph(&self) -> Option<&super::compiled::CompiledGraph<S, C>> {
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

/// Whether a node returning `O` may send control beyond its edges: the state's update, its
/// `Option` and `()` cannot; anything else (a `Command`, pushes, a user type) might.
fn output_may_goto<S: State, O: 'static>() -> bool {
    let o = TypeId::of::<O>();
    ![TypeId::of::<S::Update>(), TypeId::of::<Option<S::Update>>(), TypeId::of::<()>()].contains(&o)
}

/// A node, erased. Build one with [`node`] (needed only for [`StateGraph::add_sequence`]).
///
/// [`StateGraph::add_sequence`]: crate::StateGraph::add_sequence
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

/// Erases a node function (for APIs that take several nodes of different types at once).
pub fn node<S: State, C: Send + Sync + 'static, M>(f: impl IntoNode<S, C, M>) -> BoxedNode<S, C> {
    f.into_node()
}

/// Something that can be a node of a graph over `S` with context `C`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used as a node of this graph",
    note = "a node is `async fn(State) -> Result<Output, E>` or `async fn(State, Runtime<Ctx>) -> Result<Output, E>`, where Output is the state's Update, Option<Update>, Command or Vec<Push> and E converts into a boxed error"
)]
pub trait IntoNode<S: State, C, M>: Send + Sync + 'static {
    /// Erases the node.
    fn into_node(self) -> BoxedNode<S, C>;
}

impl<S: State, C> IntoNode<S, C, ()> for BoxedNode<S, C>
where
    C: 'static,
{
    fn into_node(self) -> BoxedNode<S, C> {
        self
    }
}

/// Marker for `async fn(S)` nodes.
#[derive(Debug)]
pub struct StateOnly;
/// Marker for `async fn(S, Runtime<C>)` nodes.
#[derive(Debug)]
pub struct WithRuntime;

struct FnNode<F>(F);

impl<S, C, F, Fut, O, E> ErasedNode<S, C> for FnNode<F>
where
    S: State,
    F: Fn(S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    O: IntoNodeOutput<S> + 'static,
    E: Into<BoxError>,
{
    fn may_goto(&self) -> bool {
        output_may_goto::<S, O>()
    }

    fn call(&self, state: S, _runtime: Runtime<C>) -> NodeFuture<S> {
        let fut = (self.0)(state);
        Box::pin(async move { fut.await.map(IntoNodeOutput::into_node_output).map_err(Into::into) })
    }
}

impl<S, C, F, Fut, O, E> IntoNode<S, C, (StateOnly, O, E)> for F
where
    S: State,
    C: Send + Sync + 'static,
    F: Fn(S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    O: IntoNodeOutput<S> + 'static,
    E: Into<BoxError> + 'static,
{
    fn into_node(self) -> BoxedNode<S, C> {
        BoxedNode(Arc::new(FnNode(self)))
    }
}

struct RtNode<F>(F);

impl<S, C, F, Fut, O, E> ErasedNode<S, C> for RtNode<F>
where
    S: State,
    F: Fn(S, Runtime<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    O: IntoNodeOutput<S> + 'static,
    E: Into<BoxError>,
{
    fn may_goto(&self) -> bool {
        output_may_goto::<S, O>()
    }

    fn call(&self, state: S, runtime: Runtime<C>) -> NodeFuture<S> {
        let fut = (self.0)(state, runtime);
        Box::pin(async move { fut.await.map(IntoNodeOutput::into_node_output).map_err(Into::into) })
    }
}

impl<S, C, F, Fut, O, E> IntoNode<S, C, (WithRuntime, O, E)> for F
where
    S: State,
    C: Send + Sync + 'static,
    F: Fn(S, Runtime<C>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    O: IntoNodeOutput<S> + 'static,
    E: Into<BoxError> + 'static,
{
    fn into_node(self) -> BoxedNode<S, C> {
        BoxedNode(Arc::new(RtNode(self)))
    }
}
