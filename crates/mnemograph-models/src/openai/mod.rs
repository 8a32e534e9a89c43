//! An OpenAI-compatible chat model and embeddings on `async-openai`: OpenAI, vLLM, Ollama,
//! DeepSeek, Qwen (DashScope compatible mode), or anything else speaking `/chat/completions`.

mod config;
mod embeddings;
mod telemetry;
mod wire;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use async_openai::config::OpenAIConfig as ClientConfig;
use async_openai::Client;
use futures_util::StreamExt;
use mnemograph_core::messages::Message;
use serde_json::Value;
use tracing::Instrument;

pub use config::{OpenAiConfig, OPENAI_BASE_URL};
pub use embeddings::OpenAiEmbeddings;

use crate::error::{Error, Result};
use crate::model::{ChatModel, ChatRequest, ChunkStream};

/// A chat model behind an OpenAI-compatible `/chat/completions` endpoint.
///
/// Streaming assembles tool calls from their fragments (by `index`), keeps provider extras such
/// as `reasoning_content` in `additional_kwargs`, reports usage, and turns a stream that closes
/// without a `finish_reason` into [`Error::StreamIncomplete`] rather than a silently truncated
/// reply.
///
/// ```no_run
/// use mnemograph_core::messages::Message;
/// use mnemograph_models::{ChatModel, ChatRequest, OpenAiChatModel, OpenAiConfig};
///
/// # async fn run() -> mnemograph_models::Result<()> {
/// let model = OpenAiChatModel::new(OpenAiConfig::from_env()?)?;
/// let reply = model.invoke(ChatRequest::new(vec![Message::human("你好")])).await?;
/// println!("{}", reply.text());
/// # Ok(()) }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
#[derive(Clone)]
pub struct OpenAiChatModel {
    /// The HTTP client (shares its connection pool across clones).
    client: Client<ClientConfig>,
    /// Settings.
    config: Arc<OpenAiConfig>,
}

impl fmt::Debug for OpenAiChatModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiChatModel").field("config", &self.config).finish_non_exhaustive()
    }
}

impl OpenAiChatModel {
    /// A model for `config`.
    ///
    /// # Errors
    /// [`Error::Client`] when the HTTP client cannot be built (no TLS backend).
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        Ok(Self { client: config.client()?, config: Arc::new(config) })
    }

    /// A model configured from the environment; see [`OpenAiConfig::from_env`].
    ///
    /// # Errors
    /// As [`OpenAiConfig::from_env`] and [`new`](Self::new).
    pub fn from_env() -> Result<Self> {
        Self::new(OpenAiConfig::from_env()?)
    }

    /// The settings.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }
}

impl ChatModel for OpenAiChatModel {
    fn invoke(&self, request: ChatRequest) -> impl Future<Output = Result<Message>> + Send {
        let body = wire::request_body(&self.config, &request, false);
        let span = telemetry::chat_span(&self.config.model, false);
        let call = async move {
            let reply: Value = self.client.chat().create_byot(body).await?;
            wire::parse_response(reply)
        };
        let recorded = span.clone();
        async move {
            let outcome = call.await;
            match &outcome {
                Ok(m) => telemetry::record_response(&recorded, m.response_metadata(), m.usage()),
                Err(e) => telemetry::record_error(&recorded, e),
            }
            outcome
        }
        .instrument(span)
    }

    fn stream(&self, request: ChatRequest) -> impl Future<Output = Result<ChunkStream>> + Send {
        let body = wire::request_body(&self.config, &request, true);
        let span = telemetry::chat_span(&self.config.model, true);
        let opened = span.clone();
        async move {
            let events = match self.client.chat().create_stream_byot::<Value, Value>(body).await {
                Ok(events) => events,
                Err(e) => {
                    let e = Error::from(e);
                    telemetry::record_error(&opened, &e);
                    return Err(e);
                }
            };
            let chunks = checked_stream(events.map(|event| wire::parse_chunk(&event?)));
            Ok(recorded_stream(chunks, opened))
        }
        .instrument(span)
    }

    fn model_name(&self) -> &str {
        &self.config.model
    }
}

/// The chunks of `chunks`, recording on `span` what they say about the response and the error
/// that ends them; the span lasts as long as the stream.
fn recorded_stream(chunks: ChunkStream, span: tracing::Span) -> ChunkStream {
    Box::pin(chunks.map(move |chunk| {
        match &chunk {
            Ok(c) => telemetry::record_response(&span, &c.response_metadata, c.usage.as_ref()),
            Err(e) => telemetry::record_error(&span, e),
        }
        chunk
    }))
}

/// Ends the stream after its first error, and adds [`Error::StreamIncomplete`] when it closes
/// before any chunk carried a `finish_reason`: async-openai ends a stream quietly both on
/// `[DONE]` and when the server just closes the body, and only the latter is a truncated reply.
fn checked_stream(
    chunks: impl futures_core::Stream<Item = Result<crate::model::ChatChunk>> + Send + 'static,
) -> ChunkStream {
    let state = (Box::pin(chunks), false, false);
    Box::pin(futures_util::stream::unfold(state, |(mut inner, finished, done)| async move {
        if done {
            return None;
        }
        match inner.next().await {
            Some(Ok(chunk)) => {
                let finished = finished || chunk.is_final();
                Some((Ok(chunk), (inner, finished, false)))
            }
            Some(Err(e)) => Some((Err(e), (inner, finished, true))),
            None if finished => None,
            None => Some((Err(Error::StreamIncomplete), (inner, finished, true))),
        }
    }))
}
