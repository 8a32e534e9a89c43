//! # mnemograph-models
//!
//! Chat models, tools and token counting for [mnemograph-core](mnemograph_core) agents.
//!
//! ```
//! use mnemograph_core::messages::{Message, ToolCall};
//! use mnemograph_models::{tool, ApproxTokenCounter, ChatModel, ChatRequest, Result, ToolNode, TokenCounter};
//!
//! /// A model that asks for the weather once, then answers with what the tool said.
//! struct Scripted;
//!
//! impl ChatModel for Scripted {
//!     async fn invoke(&self, request: ChatRequest) -> Result<Message> {
//!         Ok(match request.messages.last() {
//!             Some(m) if m.tool_call_id().is_some() => Message::ai(format!("天气：{}", m.text())),
//!             _ => Message::ai("").with_tool_calls(vec![ToolCall::new(
//!                 "weather",
//!                 serde_json::json!({"city": "北京"}),
//!                 "call_1",
//!             )]),
//!         })
//!     }
//! }
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct City {
//!     /// The city to look up.
//!     city: String,
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<()> {
//! let weather = tool("weather", "Current weather", |c: City| async move {
//!     Ok::<_, std::convert::Infallible>(format!("{} 晴", c.city))
//! });
//! let tools = ToolNode::new([weather.into()]);
//!
//! let mut history = vec![Message::human("北京天气怎么样？")];
//! let request = ChatRequest::new(history.clone()).with_tools(tools.specs());
//! history.push(Scripted.invoke(request).await?);
//! history.extend(tools.run(&history).await);
//! history.push(Scripted.invoke(ChatRequest::new(history.clone())).await?);
//!
//! assert_eq!(history.last().unwrap().text(), "天气：北京 晴");
//! assert!(ApproxTokenCounter::new().count_messages(&history) > 20);
//! # Ok(()) }
//! ```
//!
//! ## Concepts
//! - [`ChatModel`]: `invoke` (and optionally `stream`) with `async fn`; [`DynChatModel`] and
//!   [`SharedChatModel`] erase the type; [`ChatModelExt`] binds tools and, with
//!   [`invoke_in_graph`](ChatModelExt::invoke_in_graph), streams tokens into a graph run's
//!   `messages` stream mode with node metadata.
//! - `OpenAiChatModel` / `OpenAiEmbeddings` (feature `openai`): any OpenAI-compatible endpoint,
//!   configured from `OpenAiConfig` or `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MODEL`.
//! - [`Tool`], [`tool`], [`tool_with_schema`]: tools from async fns with JSON-schema arguments;
//!   [`ToolNode`] runs a reply's calls concurrently and never fails; [`tools_condition`] routes.
//! - [`TokenCounter`]: the fast [`ApproxTokenCounter`] for mixed Chinese/English text, and the
//!   exact `TiktokenCounter` (feature `tiktoken`; cl100k_base, o200k_base).
//!
//! ## Tracing
//! Each `OpenAiChatModel` call is an `info` span `chat` and each [`ToolNode`] call an `info`
//! span `execute_tool`, with OpenTelemetry's GenAI attributes (`gen_ai.request.model`,
//! `gen_ai.response.model`, `gen_ai.usage.input_tokens`/`output_tokens`,
//! `gen_ai.response.finish_reasons`, `gen_ai.tool.name`, `gen_ai.tool.call.id`) and the
//! outcome (`error.type` on failure). Messages, arguments and results are never recorded.
//!
//! ## Features
//!
//! | feature | default | what it adds | what it builds |
//! |---|---|---|---|
//! | `openai` | no | `OpenAiChatModel`, `OpenAiEmbeddings`, `OpenAiConfig`, `OPENAI_BASE_URL` | async-openai, reqwest, rustls with the ring provider |
//! | `tiktoken` | no | `TiktokenCounter`, `Encoding` | tiktoken-rs and its vocabularies (8 MB) |
//!
//! Without features the crate is the traits and what needs no network: [`ChatModel`] and its
//! extensions, messages and streaming chunks, tools and [`ToolNode`], [`ApproxTokenCounter`].
//! Both features are off by default because a default feature cannot be turned off from below:
//! a library that depends on mnemograph-models (mnemograph-agent does) would otherwise force the HTTP and
//! TLS stack, or 8 MB of vocabularies, on every program that brings its own model. The
//! application turns on what it uses:
//!
//! ```toml
//! mnemograph-models = { version = "0.1", features = ["openai"] }
//! ```
//!
//! **TLS.** `openai` uses rustls with ring, the one crypto provider of this workspace, and the
//! platform's certificate verifier; it installs no process-wide provider (one the application
//! installed is used instead of ring). reqwest 0.13 gets its `rustls-no-provider` feature, so in a
//! program that also builds its own `reqwest` 0.13 client *without* a TLS feature of its own,
//! that client needs a provider: enable reqwest's `rustls` feature (aws-lc-rs), or pass a
//! rustls config with `ClientBuilder::tls_backend_preconfigured`.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod chat_call;
mod error;
mod model;
#[cfg(feature = "openai")]
mod openai;
mod tokens;
mod tools;

pub use chat_call::ModelCall;
pub use error::{Error, Result};
pub use mnemograph_core::BoxFuture;
pub use model::{
    collect_stream, ChatChunk, ChatModel, ChatModelExt, ChatRequest, ChunkAggregator, ChunkStream,
    DynChatModel, SharedChatModel, ToolCallChunk, ToolChoice, WithTools,
};
#[cfg(feature = "openai")]
pub use openai::{OpenAiChatModel, OpenAiConfig, OpenAiEmbeddings, OPENAI_BASE_URL};
pub use tokens::{
    ApproxTokenCounter, TokenCounter, REPLY_PRIMING_TOKENS, TOKENS_PER_IMAGE, TOKENS_PER_MESSAGE,
    TOKENS_PER_TOOL_CALL,
};
#[cfg(feature = "tiktoken")]
pub use tokens::{Encoding, TiktokenCounter};
pub use tools::{
    tool, tool_with_schema, tools_condition, DynTool, FnTool, HasMessages, SharedTool, Tool, ToolNode,
    ToolNodeMarker, ToolOutput, ToolSpec,
};
