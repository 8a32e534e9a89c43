//! The [`ChatModel`] trait, the request it takes, and its object-safe twin.

mod chunk;
mod request;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use futures_core::Stream;
use futures_util::StreamExt;
use mnemograph_core::messages::Message;
use mnemograph_core::{Runtime, StreamMode};

pub use chunk::{ChatChunk, ChunkAggregator, ToolCallChunk};
pub use request::{ChatRequest, ToolChoice};

use crate::error::Result;
use crate::tools::ToolSpec;
use mnemograph_core::BoxFuture;

/// A stream of reply chunks, as [`ChatModel::stream`] returns it.
pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<ChatChunk>> + Send>>;

/// A chat model: messages (and tool specs) in, one AI message out (LangChain's
/// `BaseChatModel`).
///
/// Implement it with `async fn`s. Only [`invoke`](Self::invoke) is required: the default
/// [`stream`](Self::stream) yields the whole reply as one chunk, so a scripted fake needs a few
/// lines. Use a model through [`ChatModelExt`] (tool binding, streaming into a graph run), and
/// store it as `Arc<dyn DynChatModel>` when the type must be erased.
///
/// ```
/// use mnemograph_core::messages::Message;
/// use mnemograph_models::{ChatModel, ChatRequest, Result};
///
/// struct Shout;
///
/// impl ChatModel for Shout {
///     async fn invoke(&self, request: ChatRequest) -> Result<Message> {
///         let last = request.messages.last().map(Message::text).unwrap_or_default();
///         Ok(Message::ai(last.to_uppercase()))
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<()> {
/// let reply = Shout.invoke(ChatRequest::new(vec![Message::human("hi")])).await?;
/// assert_eq!(reply.text(), "HI");
/// # Ok(()) }
/// ```
pub trait ChatModel: Send + Sync + 'static {
    /// The complete reply to `request`.
    ///
    /// # Errors
    /// Whatever the model reports; see [`Error`](crate::Error).
    fn invoke(&self, request: ChatRequest) -> impl Future<Output = Result<Message>> + Send;

    /// The reply as a stream of chunks. The default calls [`invoke`](Self::invoke) and yields
    /// one chunk.
    ///
    /// A stream that cannot finish must end with an error item rather than just stop, or the
    /// truncated reply would pass for a whole one (the OpenAI client turns a stream that closes
    /// without a `finish_reason` into [`Error::StreamIncomplete`](crate::Error::StreamIncomplete)).
    ///
    /// # Errors
    /// Errors before the first chunk (bad key, rate limit) come back here; errors after it
    /// (a dropped connection) come as the stream's last item.
    fn stream(&self, request: ChatRequest) -> impl Future<Output = Result<ChunkStream>> + Send {
        async move {
            let message = self.invoke(request).await?;
            let chunk = ChatChunk::from_message(&message);
            Ok(Box::pin(futures_util::stream::iter([Ok(chunk)])) as ChunkStream)
        }
    }

    /// The model's name, for metadata and logs.
    fn model_name(&self) -> &str {
        "unknown"
    }
}

/// The object-safe twin of [`ChatModel`], implemented for every model.
pub trait DynChatModel: Send + Sync + 'static {
    /// See [`ChatModel::invoke`].
    fn invoke_boxed(&self, request: ChatRequest) -> BoxFuture<'_, Result<Message>>;
    /// See [`ChatModel::stream`].
    fn stream_boxed(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChunkStream>>;
    /// See [`ChatModel::model_name`].
    fn model_name_dyn(&self) -> &str;
}

impl<T: ChatModel> DynChatModel for T {
    fn invoke_boxed(&self, request: ChatRequest) -> BoxFuture<'_, Result<Message>> {
        Box::pin(self.invoke(request))
    }
    fn stream_boxed(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChunkStream>> {
        Box::pin(self.stream(request))
    }
    fn model_name_dyn(&self) -> &str {
        self.model_name()
    }
}

/// A type-erased, shared model: what agents store. Build one with [`SharedChatModel::new`] or
/// `From<Arc<dyn DynChatModel>>`.
#[derive(Clone)]
pub struct SharedChatModel(Arc<dyn DynChatModel>);

impl SharedChatModel {
    /// Erases `model`.
    pub fn new(model: impl ChatModel) -> Self {
        Self(Arc::new(model))
    }
}

impl From<Arc<dyn DynChatModel>> for SharedChatModel {
    fn from(model: Arc<dyn DynChatModel>) -> Self {
        Self(model)
    }
}

impl fmt::Debug for SharedChatModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SharedChatModel").field(&self.0.model_name_dyn()).finish()
    }
}

impl ChatModel for SharedChatModel {
    fn invoke(&self, request: ChatRequest) -> impl Future<Output = Result<Message>> + Send {
        self.0.invoke_boxed(request)
    }
    fn stream(&self, request: ChatRequest) -> impl Future<Output = Result<ChunkStream>> + Send {
        self.0.stream_boxed(request)
    }
    fn model_name(&self) -> &str {
        self.0.model_name_dyn()
    }
}

/// A model with tools bound: every request it sends offers these tools (LangChain's
/// `bind_tools`). Tools already on a request are kept and these are added after them.
#[derive(Debug, Clone)]
pub struct WithTools<M> {
    /// The wrapped model.
    model: M,
    /// Tools added to each request.
    tools: Arc<[ToolSpec]>,
    /// Tool choice added to requests that have none.
    choice: Option<ToolChoice>,
}

impl<M: ChatModel> WithTools<M> {
    /// Sets the tool choice for requests that have none.
    #[must_use]
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.choice = Some(choice);
        self
    }

    fn prepare(&self, mut request: ChatRequest) -> ChatRequest {
        request.tools.extend(self.tools.iter().cloned());
        if request.tool_choice.is_none() {
            request.tool_choice.clone_from(&self.choice);
        }
        request
    }
}

impl<M: ChatModel> ChatModel for WithTools<M> {
    fn invoke(&self, request: ChatRequest) -> impl Future<Output = Result<Message>> + Send {
        self.model.invoke(self.prepare(request))
    }
    fn stream(&self, request: ChatRequest) -> impl Future<Output = Result<ChunkStream>> + Send {
        self.model.stream(self.prepare(request))
    }
    fn model_name(&self) -> &str {
        self.model.model_name()
    }
}

mod sealed {
    pub trait Sealed {}
    impl<T: super::ChatModel> Sealed for T {}
}

/// Conveniences every [`ChatModel`] gets. Sealed: implemented for all models, not by users.
pub trait ChatModelExt: ChatModel + sealed::Sealed + Sized {
    /// Binds tools: requests sent through the result offer them.
    fn bind_tools(self, tools: impl IntoIterator<Item = ToolSpec>) -> WithTools<Self> {
        WithTools { model: self, tools: tools.into_iter().collect(), choice: None }
    }

    /// Erases the model's type.
    fn shared(self) -> SharedChatModel {
        SharedChatModel::new(self)
    }

    /// Calls the model from inside a graph node. When the run streams
    /// [`StreamMode::Messages`], the reply is streamed and every chunk goes to
    /// [`Runtime::stream_message`] (which tags it with the node, step and task); otherwise the
    /// model is simply invoked. Either way the result is the same assembled message, so the
    /// graph's final state does not depend on whether anyone watched the tokens.
    ///
    /// # Errors
    /// As [`ChatModel::invoke`] and [`ChatModel::stream`], including an error item that ends the
    /// stream (a dropped connection).
    fn invoke_in_graph<C>(
        &self,
        request: ChatRequest,
        runtime: &Runtime<C>,
    ) -> impl Future<Output = Result<Message>> + Send
    where
        C: Send + Sync + 'static,
    {
        let streaming = runtime.is_streaming(StreamMode::Messages);
        let runtime = runtime.clone();
        async move {
            if !streaming {
                return self.invoke(request).await;
            }
            let stream = self.stream(request).await?;
            collect_stream(stream, |id, chunk| runtime.stream_message(chunk.to_message(id))).await
        }
    }
}

impl<T: ChatModel> ChatModelExt for T {}

/// Drains `stream` into one message, calling `on_chunk` with the reply id and each chunk.
///
/// Every chunk carries the same id: the provider's reply id when the first chunk has one, a
/// fresh `run-<uuid>` otherwise (LangChain's convention), so stream consumers can group chunks
/// and the final message has the id the chunks had.
///
/// # Errors
/// The stream's first error item.
pub async fn collect_stream(
    mut stream: ChunkStream,
    mut on_chunk: impl FnMut(&str, &ChatChunk) + Send,
) -> Result<Message> {
    let mut aggregate = ChunkAggregator::new();
    let mut id: Option<String> = None;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        let id = id.get_or_insert_with(|| {
            chunk.id.clone().unwrap_or_else(|| format!("run-{}", uuid::Uuid::new_v4()))
        });
        on_chunk(id, &chunk);
        aggregate.push(&chunk);
    }
    let message = aggregate.finish();
    Ok(match id {
        Some(id) => message.with_id(id),
        None => message,
    })
}
