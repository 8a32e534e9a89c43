//! The crate's error type.

use mnemograph_checkpoint::store::StoreError;
use mnemograph_checkpoint::BoxError;

/// Everything that can go wrong in long-term memory, whichever backend holds it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The backend itself failed: a request to its server, say. The source is the backend crate's
    /// own error (mnemograph-memory-milvus's `Error::Milvus`, for one); downcast it to read more.
    #[error("memory backend failed")]
    Backend(#[source] BoxError),
    /// The embedded memory's store failed.
    #[error("memory store failed")]
    Store(#[from] StoreError),
    /// The embedding model failed or could not be loaded.
    #[error("embedding failed")]
    Embedding(#[source] BoxError),
    /// The summarizer given to [`compact_session`](crate::compact_session) failed.
    #[error("summarizer failed")]
    Summarizer(#[source] BoxError),
    /// A [`SupersedeDecider`](crate::SupersedeDecider) failed (e.g. its chat model call); nothing
    /// was retired.
    #[error("supersede decider failed")]
    Decider(#[source] BoxError),
    /// A decider's model answered something other than the strict format the prompt asks for;
    /// nothing was retired.
    #[error("malformed supersede decision: {reason}")]
    MalformedDecision {
        /// Which rule of the format it breaks.
        reason: &'static str,
        /// The answer as received, for logs.
        answer: String,
    },
    /// A decider named a memory that was not among its candidates (an LLM's candidate number out
    /// of range, or an id a custom decider made up); nothing was retired.
    #[error("decider named candidate {candidate}, which it was not shown")]
    UnknownCandidate {
        /// The candidate number (LLM) or memory id (custom decider).
        candidate: i64,
    },
    /// An argument breaks a documented rule (e.g. a control character in a user id).
    #[error("invalid {what}: {reason}")]
    InvalidInput {
        /// What was invalid.
        what: &'static str,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// The embedder returned vectors of another length than the collection holds.
    #[error("embedding has {actual} dimensions, expected {expected}")]
    Dimensions {
        /// The collection's (or the embedder's declared) dimension.
        expected: usize,
        /// What the embedder returned.
        actual: usize,
    },
    /// The backend's server is too old for the call (e.g. retire/restore on Milvus need partial
    /// upsert, Milvus 2.6.2+); nothing was written.
    #[error("{feature} needs {needs} or newer; the server reports {server}")]
    Unsupported {
        /// What the call needs.
        feature: &'static str,
        /// The first server version that has it.
        needs: &'static str,
        /// The version string the server reported.
        server: String,
    },
    /// The backend answered with something that cannot be read.
    #[error("unexpected backend response: {detail}")]
    Response {
        /// What was unexpected.
        detail: String,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
