//! [`ServerError`]: every failure of a request, with the status and body LangGraph's server
//! answers it with.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use mnemograph_core::store::StoreError;

/// A request that failed. Its response is the status below and the body `{"detail": "..."}`, the
/// shape the LangGraph server uses and its SDK clients read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// An assistant, thread or run that does not exist (404).
    #[error("{0}")]
    NotFound(String),
    /// The request conflicts with the thread's state: a run already in progress under the
    /// `reject` strategy, or a thread id that exists (409).
    #[error("{0}")]
    Conflict(String),
    /// The request body or a parameter is malformed (400).
    #[error("{0}")]
    BadRequest(String),
    /// The request is well formed but cannot be carried out: an input the graph's state rejects,
    /// a command the engine does not take (422).
    #[error("{0}")]
    Unprocessable(String),
    /// The request body is larger than the server takes ([`Limits::max_body_bytes`], 413).
    ///
    /// [`Limits::max_body_bytes`]: crate::Limits::max_body_bytes
    #[error("{0}")]
    PayloadTooLarge(String),
    /// The request body is not JSON (415).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// The request names a host this server does not answer for (421), as a DNS-rebinding page
    /// does.
    #[error("{0}")]
    MisdirectedRequest(String),
    /// The request carries no credentials the server's [`Auth`](crate::auth::Auth) accepts (401).
    #[error("{0}")]
    Unauthorized(String),
    /// The caller is authenticated but may not do what it asks (403).
    #[error("{0}")]
    Forbidden(String),
    /// The server is configured in a way it refuses to run with: a malformed token table, a
    /// listener on a public address without authentication.
    #[error("{0}")]
    Misconfigured(String),
    /// A browser page of another origin, not one the server allows, asked for a change (403).
    #[error("{0}")]
    CrossOrigin(String),
    /// The thread's queue is full ([`Limits::max_queue_per_thread`], 429).
    ///
    /// [`Limits::max_queue_per_thread`]: crate::Limits::max_queue_per_thread
    #[error("{0}")]
    TooManyRequests(String),
    /// The graph or its checkpointer failed (500, or 409 for a concurrent write to the thread).
    #[error(transparent)]
    Graph(#[from] mnemograph_core::Error),
    /// The store refused or failed (400 for a bad namespace, 422 for a bad value or filter).
    #[error(transparent)]
    Store(#[from] mnemograph_core::store::StoreError),
    /// A run hook refused the run (a run's `error` event).
    #[error("run hook failed: {0}")]
    Hook(#[source] mnemograph_core::BoxError),
    /// The run queue's database failed.
    #[error("run queue: {0}")]
    Queue(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The listener failed.
    #[error("server I/O: {0}")]
    Io(#[from] std::io::Error),
}

impl ServerError {
    /// The HTTP status of the error's response.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::MisdirectedRequest(_) => StatusCode::MISDIRECTED_REQUEST,
            Self::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            Self::Forbidden(_) | Self::CrossOrigin(_) => StatusCode::FORBIDDEN,
            Self::TooManyRequests(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::Graph(e) if e.is_conflict() => StatusCode::CONFLICT,
            Self::Store(StoreError::InvalidNamespace { .. }) => StatusCode::BAD_REQUEST,
            Self::Store(StoreError::InvalidValue { .. } | StoreError::InvalidFilter { .. }) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            Self::Graph(_)
            | Self::Store(_)
            | Self::Hook(_)
            | Self::Queue(_)
            | Self::Io(_)
            | Self::Misconfigured(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for ServerError {
    fn into_response(self) -> Response {
        let status = self.status();
        if status.is_server_error() {
            tracing::warn!(error = %self, "request failed");
        }
        (status, Json(serde_json::json!({ "detail": self.to_string() }))).into_response()
    }
}

/// What a fallible handler returns.
pub type Result<T, E = ServerError> = std::result::Result<T, E>;

/// An assistant that does not exist, or that the caller may not see.
pub fn assistant_not_found(id: &str) -> ServerError {
    ServerError::NotFound(format!("Assistant '{id}' not found"))
}

/// An assistant created under an id that is taken.
pub fn assistant_exists(id: &str) -> ServerError {
    ServerError::Conflict(format!("Assistant {id} already exists"))
}

/// A version an assistant never had.
pub fn version_not_found(id: &str, version: i64) -> ServerError {
    ServerError::NotFound(format!("Version {version} not found for assistant {id}"))
}

/// A cron that does not exist, or that the caller may not see.
pub fn cron_not_found(id: &str) -> ServerError {
    ServerError::NotFound(format!("Cron '{id}' not found"))
}

/// A thread that does not exist, or that the caller may not see.
pub fn thread_not_found(id: &str) -> ServerError {
    ServerError::NotFound(format!("Thread with ID {id} not found"))
}

/// A thread created under an id that is taken.
pub fn thread_exists(id: &str) -> ServerError {
    ServerError::Conflict(format!("Thread with ID {id} already exists"))
}

/// A run that does not exist, or that the caller may not see.
pub fn run_not_found(id: &str) -> ServerError {
    ServerError::NotFound(format!("Run with ID {id} not found"))
}

/// A run deleted before it ended.
pub fn run_in_progress(id: &str) -> ServerError {
    ServerError::Conflict(format!("Run {id} is still in progress; cancel it first"))
}

/// A run refused by the `reject` strategy on a busy thread.
pub fn thread_busy() -> ServerError {
    ServerError::Conflict(
        "Thread is already running a task. Wait for it to finish or choose a different multitask strategy."
            .into(),
    )
}
