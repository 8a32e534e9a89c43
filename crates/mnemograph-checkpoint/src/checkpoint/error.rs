//! [`CheckpointError`]: what a checkpointer reports.

use super::serde::SerdeError;
use super::{CheckpointConfig, ValueError};

/// A boxed error from a backend.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A failure of a checkpointer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The backend failed (connection, query, ...). Downcast the source for details.
    #[error("checkpoint backend error")]
    Backend(#[source] BoxError),
    /// A stored value could not be decoded.
    #[error("cannot decode channel `{channel}` of checkpoint {checkpoint_id} in thread `{thread_id}`")]
    Decode {
        /// The thread.
        thread_id: String,
        /// The checkpoint.
        checkpoint_id: String,
        /// The channel or pending-write channel.
        channel: String,
        /// Why.
        #[source]
        source: ValueError,
    },
    /// A stored record is malformed.
    #[error("corrupt checkpoint record: {0}")]
    Corrupt(String),
    /// The request itself is invalid (e.g. an id longer than the store accepts).
    #[error("invalid checkpoint request: {0}")]
    Invalid(String),
    /// [`Checkpointer::commit`](super::Checkpointer::commit) expecting the latest parent found
    /// that the latest checkpoint of the thread and namespace is no longer the parent the caller
    /// built on: another writer committed first.
    /// Nothing was saved. Re-read the thread and try again, or report it.
    #[error(
        "checkpoint conflict in thread `{thread_id}` namespace `{checkpoint_ns}`: expected latest {}, found {}",
        DisplayId(.expected.as_deref()),
        DisplayId(.found.as_deref())
    )]
    Conflict {
        /// The thread.
        thread_id: String,
        /// The namespace.
        checkpoint_ns: String,
        /// The parent the new checkpoint was built on (`None`: the namespace was empty).
        expected: Option<String>,
        /// The latest checkpoint actually stored (`None`: the namespace is empty).
        found: Option<String>,
    },
    /// A fenced write found that its writer no longer holds what it writes to (for example, a
    /// run that another worker took over): the fence, checked inside the write's own
    /// transaction, refused it. Nothing was saved.
    #[error("write refused by its fence: {0}")]
    Fenced(String),
    /// The saver does not offer this operation: one of LangGraph's extended capabilities
    /// ([`delete_for_runs`](super::Checkpointer::delete_for_runs),
    /// [`copy_thread`](super::Checkpointer::copy_thread), [`prune`](super::Checkpointer::prune))
    /// that a saver written against the five base operations leaves out. Nothing was changed.
    #[error("the checkpointer does not support `{operation}`")]
    Unsupported {
        /// LangGraph's name of the operation.
        operation: &'static str,
    },
}

impl CheckpointError {
    /// The [`Invalid`](Self::Invalid) error of a commit given no checkpoint.
    pub fn empty_chain() -> Self {
        Self::Invalid("a commit needs at least one checkpoint".to_owned())
    }

    /// A [`Conflict`](Self::Conflict) at `config` (whose `checkpoint_id` is the expected parent).
    pub fn conflict(config: &CheckpointConfig, found: Option<String>) -> Self {
        Self::Conflict {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            expected: config.checkpoint_id.clone(),
            found,
        }
    }

    /// The [`Unsupported`](Self::Unsupported) error of `operation`.
    pub fn unsupported(operation: &'static str) -> Self {
        Self::Unsupported { operation }
    }

    /// Whether this is a [`Fenced`](Self::Fenced) refusal.
    pub fn is_fenced(&self) -> bool {
        matches!(self, Self::Fenced(_))
    }

    /// Whether this is a [`Conflict`](Self::Conflict).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict { .. })
    }
}

/// A checkpoint id in an error message, or `none`.
struct DisplayId<'a>(Option<&'a str>);

impl std::fmt::Display for DisplayId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(id) => write!(f, "`{id}`"),
            None => f.write_str("none"),
        }
    }
}

impl From<SerdeError> for CheckpointError {
    /// Encoding failures are the caller's value; everything else means stored data is corrupt.
    fn from(e: SerdeError) -> Self {
        match e {
            SerdeError::Encode(_) => CheckpointError::Backend(Box::new(e)),
            other => CheckpointError::Corrupt(other.to_string()),
        }
    }
}
