//! [`BoxFuture`]: the future type of the object-safe traits, shared by models and tools.

use std::future::Future;
use std::pin::Pin;

/// A boxed future, as the object-safe [`DynChatModel`](crate::DynChatModel) and
/// [`DynTool`](crate::DynTool) return it.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
