//! The example's error type and how each error becomes an HTTP response.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use mnemograph_core::checkpoint::CheckpointError;

/// Everything that can go wrong in the chat service.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A conversation id the service refuses (it becomes a `GET_LOCK` name and a thread id).
    #[error("invalid conversation id {id:?}: {reason}")]
    InvalidConversationId {
        /// The id as received.
        id: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// The user's message is empty or only whitespace.
    #[error("the message is empty")]
    EmptyMessage,
    /// The user's message is longer than the service accepts.
    #[error("the message has {chars} characters, more than the {max} allowed")]
    MessageTooLong {
        /// Its length in characters.
        chars: usize,
        /// The limit.
        max: usize,
    },
    /// No conversation with this id in the legacy `conversations` table.
    #[error("no conversation {conversation_id:?}")]
    NotFound {
        /// The id asked for.
        conversation_id: String,
    },
    /// Another round of the same conversation held the conversation lock for longer than the
    /// service waits.
    #[error("conversation {conversation_id:?} is busy with another message; retry later")]
    Busy {
        /// The conversation.
        conversation_id: String,
    },
    /// The graph run ended without an AI message at the end of the conversation.
    #[error("the model gave no answer")]
    NoAnswer,
    /// The task running a round stopped before finishing (it panicked or the runtime shut down).
    #[error("the chat round was aborted")]
    RoundAborted,
    /// An environment variable has a value the service cannot use.
    #[error("environment variable {var}={value:?} is not valid: {reason}")]
    Config {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The graph failed (a node, the model, or the checkpointer underneath).
    #[error("graph run failed")]
    Graph(#[from] mnemograph_core::Error),
    /// The checkpointer failed outside a graph run.
    #[error("checkpointer failed")]
    Checkpoint(#[from] CheckpointError),
    /// Setting up the checkpoint tables failed.
    #[error("checkpoint tables setup failed")]
    CheckpointSetup(#[from] mnemograph_checkpoint_mysql::Error),
    /// The model client could not be built.
    #[error("model setup failed")]
    Model(#[from] mnemograph_models::Error),
    /// A statement on the legacy tables or the lock connection failed.
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// Binding or serving the HTTP listener failed.
    #[error("http server error")]
    Io(#[from] std::io::Error),
}

/// The service's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The HTTP status this error is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::InvalidConversationId { .. } | Self::EmptyMessage | Self::MessageTooLong { .. } => {
                StatusCode::BAD_REQUEST
            }
            Self::NotFound { .. } => StatusCode::NOT_FOUND,
            Self::Busy { .. } => StatusCode::CONFLICT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The text shown to the client: the whole message for the client's own mistakes, a generic
    /// one for server failures (their causes, which may name hosts or SQL, go to the log).
    pub fn public_message(&self) -> String {
        if self.status().is_server_error() {
            "internal error; see the server log".to_owned()
        } else {
            self.to_string()
        }
    }

    /// The error and its chain of sources, on one line, for the log.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(s) = source {
            text.push_str(": ");
            text.push_str(&s.to_string());
            source = s.source();
        }
        text
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(error = %self.chain(), "request failed");
        }
        (status, Json(serde_json::json!({ "error": self.public_message() }))).into_response()
    }
}
