//! [`ChatCall`]: the smallest chat-model contract, messages in and a reply out, for code that asks
//! a model something on the side (a memory decider, a summarizer) and needs nothing else of it.

use std::future::Future;

use super::Message;
use crate::BoxError;

/// One chat-model call: messages in, the model's reply out.
///
/// Model clients implement it beside their full interface (mnemograph-models' models do, through
/// `as_chat_call`), test doubles implement it directly, and a closure becomes one with
/// [`chat_fn`]. Libraries that only need a reply (memory deciders, summarizers) take it instead of
/// a model client, so they depend on no model crate.
pub trait ChatCall: Send + Sync {
    /// The reply to `messages`.
    fn call(&self, messages: Vec<Message>) -> impl Future<Output = Result<Message, BoxError>> + Send;
}

/// A [`ChatCall`] from a closure; see [`chat_fn`].
#[derive(Debug, Clone, Copy)]
pub struct FnChat<F>(F);

/// Adapts `f(messages) -> future of a reply` into a [`ChatCall`].
///
/// ```
/// use mnemograph_checkpoint::messages::{chat_fn, ChatCall, Message};
///
/// let upper = chat_fn(|messages: Vec<Message>| async move {
///     let last = messages.last().map(Message::text).unwrap_or_default();
///     Ok(Message::ai(last.to_uppercase()))
/// });
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let reply = upper.call(vec![Message::human("hi")]).await.unwrap();
/// assert_eq!(reply.text(), "HI");
/// # });
/// ```
pub fn chat_fn<F, Fut>(f: F) -> FnChat<F>
where
    F: Fn(Vec<Message>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Message, BoxError>> + Send,
{
    FnChat(f)
}

impl<F, Fut> ChatCall for FnChat<F>
where
    F: Fn(Vec<Message>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Message, BoxError>> + Send,
{
    fn call(&self, messages: Vec<Message>) -> impl Future<Output = Result<Message, BoxError>> + Send {
        (self.0)(messages)
    }
}

impl<C: ChatCall> ChatCall for std::sync::Arc<C> {
    fn call(&self, messages: Vec<Message>) -> impl Future<Output = Result<Message, BoxError>> + Send {
        (**self).call(messages)
    }
}
