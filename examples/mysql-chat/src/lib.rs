//! # mysql-chat
//!
//! Needs MariaDB 10.7+ or MySQL 8.0.19+ (`MYSQL_URL`); an OpenAI-compatible API is optional
//! (`OPENAI_API_KEY`, otherwise a deterministic offline model answers). See the README.
//!
//! A chat service whose conversation state lives in LangGraph's MySQL checkpoint tables
//! (`checkpoints`, `checkpoint_writes`, `checkpoint_blobs`, written by [`mnemograph_checkpoint_mysql`]),
//! with the application's older `conversations` / `messages` tables kept for display:
//!
//! - `thread_id = "conv_{conversation_id}"` ([`thread_id`]); every round runs a
//!   `create_agent` graph (`START → trimming.before_model → model → END`) on that thread, so
//!   the model sees the conversation the checkpointer restored.
//! - Each round is also appended to `conversations` / `messages`, in one transaction
//!   ([`legacy`]).
//! - A conversation that exists only in the legacy tables is migrated into a checkpoint on its
//!   first round ([`migrate`]), exactly once even when several first requests race: every round
//!   holds the conversation's MySQL named lock `GET_LOCK('conv_<id>')` ([`ConversationLock`])
//!   from before the "has it a checkpoint?" check until it is saved. A conversation's other
//!   rounds in the same process queue without a connection ([`ConversationQueues`]), so a
//!   burst on one conversation cannot take the lock pool from the others.
//! - The thread stays bounded: mnemograph-agent's `TrimmingMiddleware` keeps the checkpointed
//!   conversation within a token budget (`CHAT_CONTEXT_TOKENS`), and each round prunes the
//!   thread to its newest checkpoints (`CHAT_KEEP_CHECKPOINTS`, [`ChatService::footprint`]
//!   measures it). The legacy tables keep the whole conversation.
//! - HTTP with axum ([`router`]): `POST /api/chat`, `POST /api/chat/stream` (SSE),
//!   `GET /api/conversations/{id}/messages`.
//!
//! ```no_run
//! # async fn demo() -> mysql_chat::Result<()> {
//! let config = mysql_chat::Config::from_env()?;
//! let (model, _choice) = mysql_chat::model_from_env()?;
//! let service = mysql_chat::ChatService::connect(&config, model).await?;
//! let round = service.chat(mysql_chat::ChatInput::new(None, "Hi, my name is Alice.")).await?;
//! let again = service.chat(mysql_chat::ChatInput::new(Some(round.conversation_id), "What is my name?")).await?;
//! assert!(again.answer.contains("Alice")); // with the offline model
//! # Ok(()) }
//! ```

pub mod config;
mod error;
pub mod legacy;
mod lock;
pub mod migrate;
mod model;
mod offline;
mod routes;
mod service;

pub use config::Config;
pub use error::{Error, Result};
pub use lock::{lock_name, ConversationLock, ConversationQueues, QueueTurn};
pub use migrate::ThreadStatus;
pub use model::{model_from_env, ModelChoice, DEFAULT_OPENAI_MODEL};
pub use offline::{OfflineModel, OFFLINE_MODEL_NAME};
pub use routes::router;
pub use service::{
    chat_agent, ChatInput, ChatService, ConversationView, Round, RoundEvent, ThreadFootprint,
    MAX_CONVERSATION_ID_CHARS, MAX_MESSAGE_CHARS, SYSTEM_PROMPT,
};

/// The LangGraph thread of a conversation: `conv_{conversation_id}`.
///
/// ```
/// assert_eq!(mysql_chat::thread_id("0aec2add"), "conv_0aec2add");
/// ```
pub fn thread_id(conversation_id: &str) -> String {
    format!("conv_{conversation_id}")
}

/// Serves [`router`] on `listener` until `shutdown` completes.
///
/// # Errors
/// [`Error::Io`] when serving fails.
pub async fn serve(
    listener: tokio::net::TcpListener,
    service: ChatService,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<()> {
    axum::serve(listener, router(service)).with_graceful_shutdown(shutdown).await?;
    Ok(())
}
