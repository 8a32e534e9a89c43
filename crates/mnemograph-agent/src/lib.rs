//! # mnemograph-agent
//!
//! LangChain v1's `create_agent` on [mnemograph-core](mnemograph_core): the ReAct loop as an ordinary
//! compiled graph, middleware hooks that are their own nodes, a trimming middleware that keeps the
//! checkpointed conversation small, a summarization middleware, and a `trim_messages` that keeps
//! tool calls and their results together.
//!
//! ```
//! use mnemograph_agent::{create_agent, AgentState, TrimmingMiddleware};
//! use mnemograph_core::messages::{Message, ToolCall};
//! use mnemograph_core::prelude::*;
//! use mnemograph_models::{tool, ChatModel, ChatRequest};
//!
//! /// Calls `search_blog` once, then answers from its result.
//! struct Scripted;
//! impl ChatModel for Scripted {
//!     async fn invoke(&self, r: ChatRequest) -> mnemograph_models::Result<Message> {
//!         Ok(match r.messages.last() {
//!             Some(m) if m.tool_call_id().is_some() => Message::ai(format!("找到：{}", m.text())),
//!             _ => Message::ai("").with_tool_calls(vec![ToolCall::new(
//!                 "search_blog",
//!                 serde_json::json!({"q": "redis"}),
//!                 "c1",
//!             )]),
//!         })
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> mnemograph_core::Result<()> {
//! let search = tool("search_blog", "Searches the blog", |_: serde_json::Value| async {
//!     Ok::<_, std::convert::Infallible>("《Redis 快照》".repeat(2000)) // a huge tool result
//! });
//! let agent = create_agent(Scripted, [search.into()])
//!     .system_prompt("你是博客助手")
//!     .middleware(TrimmingMiddleware::new(3000)) // budget 3000 tokens, tool results ≤ 2000 chars
//!     .compile_with(InMemoryCheckpointer::new())?;
//!
//! let config = RunConfig::thread("user-1:session-1");
//! agent.invoke(Message::human("有 Redis 的文章吗？").into(), &config).await?;
//! let out = agent.invoke(Message::human("谢谢").into(), &config).await?;
//!
//! // The second turn's trimming rewrote the checkpointed history: the 10,000-character tool
//! // result is stored truncated.
//! let tool_result = out.messages.iter().find(|m| m.tool_call_id().is_some()).unwrap();
//! assert!(tool_result.text().chars().count() < 2100);
//! # Ok(()) }
//! ```
//!
//! ## Concepts
//! - [`create_agent`] → [`AgentBuilder`] → `CompiledGraph<AgentState>`; nodes `model`, `tools`
//!   and `"{middleware}.{hook}"`.
//! - [`Middleware`]: node hooks (`before_agent`, `before_model`, `after_model`, `after_agent`)
//!   whose updates go through the reducers, and the `wrap_model_call` / `wrap_tool_call` onion
//!   (first registered = outermost); [`JumpTo`] for `jump_to`. See [`middleware`].
//! - [`TrimmingMiddleware`] (a `@before_model` compaction) and
//!   [`SummarizationMiddleware`].
//! - [`trim_messages`]: LangChain's trimmer (last/first, max tokens, include system,
//!   start_on/end_on) that never orphans a ToolMessage or a tool call.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod agent;
mod error;
pub mod middleware;
mod state;
mod trim;

pub use agent::{create_agent, AgentBuilder, MODEL_NODE, TOOLS_NODE};
pub use error::{Error, Result};
pub use middleware::{
    after_agent, after_model, before_agent, before_model, DynMiddleware, FnHook, Hook, HookResult,
    Middleware, ModelNext, ModelRequest, ModelResponse, SummarizationMiddleware, ToolNext, ToolRequest,
    TrimmingMiddleware,
};
pub use state::{AgentState, AgentStateUpdate, JumpTo};
pub use trim::{trim_messages, Strategy, TrimOptions};
