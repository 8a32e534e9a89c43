//! Turning plain async fns into nodes.
//!
//! A node is `async fn(S) -> Result<O, E>` or `async fn(S, Runtime<C>) -> Result<O, E>` where `O`
//! is any [`IntoNodeOutput`] and `E: Into<BoxError>`. The marker parameter `M` of [`IntoNode`]
//! only keeps the two blanket impls apart (the same trick axum uses for handlers).

use std::any::TypeId;
use std::future::Future;
use std::sync::Arc;

use crate::command::IntoNodeOutput;
use crate::error::BoxError;
use crate::pregel::node::{BoxedNode, ErasedNode, NodeFuture};
use crate::runtime::Runtime;
use crate::State;

/// Whether a node returning `O` may send control beyond its edges: the state's update, its
/// `Option` and `()` cannot; anything else (a `Command`, pushes, a user type) might.
fn output_may_goto<S: State, O: 'static>() -> bool {
    let o = TypeId::of::<O>();
    ![TypeId::of::<S::Update>(), TypeId::of::<Option<S::Update>>(), TypeId::of::<()>()].contains(&o)
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
