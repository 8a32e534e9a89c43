//! [`Error`]: everything the service can fail with, and how each becomes an HTTP answer.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// The service's errors.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An environment variable has a value the service cannot use.
    #[error("environment variable {name} is invalid: {reason}")]
    Config {
        /// The variable.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A request field is missing, empty, too long or has forbidden characters.
    #[error("invalid `{field}`: {reason}")]
    InvalidInput {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A corpus article shipped with the example is malformed.
    #[error("corpus article {file} is malformed: {reason}")]
    Corpus {
        /// The article's file name.
        file: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The model ended the round without an answer; the round is stored nowhere.
    #[error("the model gave no answer; nothing was stored")]
    NoAnswer,
    /// The MySQL archive failed.
    #[error("MySQL archive failed")]
    Archive(#[from] sqlx::Error),
    /// Connecting to Redis failed.
    #[error("Redis checkpointer failed")]
    Redis(#[from] mnemograph_checkpoint_redis::RedisSaverError),
    /// The agent graph failed (a node, the checkpointer, a bad update).
    #[error("agent graph failed")]
    Graph(#[from] mnemograph_core::Error),
    /// The model client could not be built.
    #[error("model client failed")]
    Model(#[from] mnemograph_models::Error),
    /// The LangGraph API server refused a setting.
    #[error("LangGraph API server failed")]
    Server(#[from] mnemograph_server::ServerError),
    /// Binding or serving the socket failed.
    #[error("server I/O failed")]
    Io(#[from] std::io::Error),
    /// The task committing a round to both stores panicked or was cancelled.
    #[error("the round's commit task did not finish")]
    Task(#[from] tokio::task::JoinError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The error and its sources, `: `-separated: what logs and error events show.
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

    /// The HTTP status a handler answers this error with.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::InvalidInput { .. } => StatusCode::BAD_REQUEST,
            Self::Archive(_) | Self::Redis(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for Error {
    /// `{"error": "..."}` with [`Error::status`]. Server-side failures are logged with their
    /// whole chain but the client only gets the top-level message, since a driver's error text
    /// may name hosts or users.
    fn into_response(self) -> Response {
        let status = self.status();
        let message = if status.is_server_error() {
            tracing::error!(error = %self.chain(), "request failed");
            self.to_string()
        } else {
            self.chain()
        };
        (status, Json(serde_json::json!({ "error": message }))).into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_input_is_a_400_with_the_field_named() {
        let e = Error::InvalidInput { field: "user_id", reason: "must not be empty" };
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert_eq!(e.chain(), "invalid `user_id`: must not be empty");
    }

    #[test]
    fn chain_lists_sources_once() {
        let io = std::io::Error::new(std::io::ErrorKind::AddrInUse, "port taken");
        let e = Error::from(io);
        assert_eq!(e.chain(), "server I/O failed: port taken");
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }
}
