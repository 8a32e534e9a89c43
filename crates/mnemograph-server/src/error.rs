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
            Self::Graph(e) if e.is_conflict() => StatusCode::CONFLICT,
            Self::Store(StoreError::InvalidNamespace { .. }) => StatusCode::BAD_REQUEST,
            Self::Store(StoreError::InvalidValue { .. } | StoreError::InvalidFilter { .. }) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            Self::Graph(_) | Self::Store(_) | Self::Hook(_) | Self::Queue(_) | Self::Io(_) => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
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
