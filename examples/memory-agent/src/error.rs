//! The crate's error type: what can stop the agent, each with a message a user can act on.

use mnemograph_core::checkpoint::serde::SerdeError;
use mnemograph_core::checkpoint::CheckpointError;
use mnemograph_core::BoxError;

/// Everything that can go wrong in the memory agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A server named by an environment variable refused or failed the connection.
    #[error("cannot reach {service} at {url} ({hint})")]
    Unreachable {
        /// `MySQL`, `Redis` or `Milvus`.
        service: &'static str,
        /// The URL, password removed.
        url: String,
        /// What to do about it.
        hint: &'static str,
        /// What the client reported.
        #[source]
        source: BoxError,
    },
    /// A server named by an environment variable did not answer in time.
    #[error("{service} at {url} did not answer within {seconds} s ({hint})")]
    Timeout {
        /// `MySQL`, `Redis` or `Milvus`.
        service: &'static str,
        /// The URL, password removed.
        url: String,
        /// How long the agent waited.
        seconds: u64,
        /// What to do about it.
        hint: &'static str,
    },
    /// A server answered but refused or failed a request while connecting (credentials,
    /// privileges, an incompatible existing collection, ...).
    #[error("{service} at {url} failed while connecting")]
    Backend {
        /// `MySQL`, `Redis` or `Milvus`.
        service: &'static str,
        /// The URL, password removed.
        url: String,
        /// What the client reported.
        #[source]
        source: BoxError,
    },
    /// A setting or command-line argument is invalid.
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// The setting, e.g. `MYSQL_URL` or `--user`.
        what: &'static str,
        /// Which rule it breaks.
        reason: String,
    },
    /// A setting names a client this build does not compile in.
    #[error(
        "{setting} is set, but this build has no {feature} client: build with `--features {feature}` \
         (`cargo run -p memory-agent --features {feature}`), or unset {setting}"
    )]
    NotBuilt {
        /// The setting, e.g. `MYSQL_URL`.
        setting: &'static str,
        /// The cargo feature that compiles the client in.
        feature: &'static str,
    },
    /// The chat model could not be created.
    #[error("cannot set up the chat model")]
    Model(#[from] mnemograph_models::Error),
    /// The embedding model could not be fetched, read or set up.
    #[error("cannot set up the embedding model: {0}")]
    Embeddings(#[source] BoxError),
    /// The long-term memory failed outside a graph run.
    #[error("long-term memory failed")]
    Memory(#[from] mnemograph_memory::Error),
    /// A graph run failed (a node, the checkpointer, ...).
    #[error("agent run failed")]
    Graph(#[from] mnemograph_core::Error),
    /// Reading a checkpoint failed.
    #[error("cannot read the checkpoint")]
    Checkpoint(#[from] CheckpointError),
    /// A checkpoint could not be serialized to measure it.
    #[error("cannot serialize the checkpoint")]
    Serde(#[from] SerdeError),
    /// The model's reply to the importance prompt holds no number (the rule scores instead).
    #[error("the model's importance reply holds no number: {reply:?}")]
    Importance {
        /// What the model said.
        reply: String,
    },
    /// Reading stdin or writing the transcript failed.
    #[error("terminal input/output failed")]
    Io(#[from] std::io::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `url` with any password replaced by `***`, safe to print: the workspace's one copy, shared
/// with the other tools that print connection URLs.
///
/// ```
/// use memory_agent::redact;
/// assert_eq!(redact("mysql://root:s3cret@db:3306/app"), "mysql://root:***@db:3306/app");
/// assert_eq!(redact("redis://127.0.0.1:6379/"), "redis://127.0.0.1:6379/");
/// ```
pub use mnemograph_core::checkpoint::backend::redact;
