//! Chat messages and the [`add_messages`] reducer, compatible with LangChain and
//! LangGraph.
//!
//! [`Message`] models LangChain's `SystemMessage`, `HumanMessage`, `AIMessage`,
//! `ToolMessage` and `RemoveMessage` (see [`MessageType`]). [`add_messages`] is
//! LangGraph's reducer for a `messages` state field: it appends, replaces by id, and
//! deletes on [`Message::remove`] / [`Message::remove_all`].
//!
//! # Example
//!
//! ```
//! use mnemograph_checkpoint::messages::{add_messages, Message, ToolCall};
//!
//! let mut history = vec![Message::system("you are helpful"), Message::human("weather?")];
//! let reply = Message::ai("")
//!     .with_tool_calls(vec![ToolCall::new("weather", serde_json::json!({}), "c1")]);
//! add_messages(&mut history, vec![reply, Message::tool("sunny", "c1")])?;
//! assert_eq!(history.len(), 4);
//! assert!(history.iter().all(|m| m.id().is_some()));
//!
//! // Trimming: keep only the last message.
//! let kept = history[3].clone();
//! add_messages(&mut history, vec![Message::remove_all(), kept])?;
//! assert_eq!(history.len(), 1);
//! # Ok::<(), mnemograph_checkpoint::messages::MessagesError>(())
//! ```
//!
//! # Wire form
//!
//! A message serializes to the map LangChain's `model_dump()` produces, keys in the
//! same order, so data moves between Python and Rust checkpoints unchanged:
//!
//! | kind | keys |
//! |---|---|
//! | all | `content`, `additional_kwargs`, `response_metadata`, `type`, `name`, `id` |
//! | AI | then `tool_calls` (`{name, args, id, type: "tool_call"}`), `invalid_tool_calls`, `usage_metadata` |
//! | tool | then `tool_call_id`, `artifact`, `status` (`"success"` / `"error"`) |
//!
//! Keys this crate does not model are kept and written back last. Reading is lenient
//! like LangChain: missing keys and `null`s take defaults, `role` may stand in for
//! `type`, and `user`/`assistant`/`developer` are accepted. [`Message::lc_class`] gives
//! the Python class for LangGraph's msgpack encoding, and [`Message::from_kwargs`]
//! reads a map whose class is known from elsewhere.

mod chat_call;
mod content;
mod kind;
mod message;
mod reducer;
mod tool;
mod wire;

pub use chat_call::{chat_fn, ChatCall, FnChat};
pub use content::Content;
pub use kind::MessageType;
pub use message::Message;
pub use reducer::{add_messages, MessagesError};
pub use tool::{InvalidToolCall, ToolCall, ToolStatus, UsageMetadata};

/// The id of a [`Message::remove`] that tells [`add_messages`] to drop every earlier
/// message, LangGraph's `REMOVE_ALL_MESSAGES`.
pub const REMOVE_ALL_MESSAGES: &str = "__remove_all__";
