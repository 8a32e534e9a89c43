//! The crate's error type and how it maps onto [`CheckpointError`].

use mnemograph_checkpoint::checkpoint::CheckpointError;

/// A failure of the Redis saver.
///
/// Through the [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) trait it arrives as a
/// [`CheckpointError`]: [`Redis`](Self::Redis) as [`CheckpointError::Backend`] (downcast the
/// source to this type), [`Missing`](Self::Missing) and [`Corrupt`](Self::Corrupt) as
/// [`CheckpointError::Corrupt`] whose message starts with the key and field (a corrupt value's
/// reason then names the thread, namespace, checkpoint and channel readably), and
/// [`Invalid`](Self::Invalid) as [`CheckpointError::Invalid`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisSaverError {
    /// The connection or a command failed.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// A field that another field of the thread points at does not exist.
    #[error("key `{key}` field `{field}`: missing {what}")]
    Missing {
        /// The Redis key.
        key: String,
        /// The hash field or sorted-set member.
        field: String,
        /// What should have been there.
        what: &'static str,
    },
    /// A stored value cannot be read.
    #[error("key `{key}` field `{field}`: corrupt: {reason}")]
    Corrupt {
        /// The Redis key.
        key: String,
        /// The hash field.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The write is stored on the primary, but fewer replicas than
    /// [`wait_for_replicas`](crate::RedisCheckpointerBuilder::wait_for_replicas) asks for
    /// acknowledged it within the timeout: it is readable now, and would be lost if the primary
    /// failed before a replica caught up. The caller decides whether the step may go on.
    #[error(
        "stored on the primary, but {acknowledged} of {wanted} replicas acknowledged it within {timeout:?}"
    )]
    NotReplicated {
        /// The replicas asked for.
        wanted: usize,
        /// The replicas that had the write when the wait ended.
        acknowledged: usize,
        /// How long the saver waited.
        timeout: std::time::Duration,
    },
    /// A request or a setting that cannot work (bad key prefix, `put_writes` without a
    /// checkpoint id, a value the serializer rejects, ...).
    #[error("{0}")]
    Invalid(String),
}

impl From<RedisSaverError> for CheckpointError {
    fn from(err: RedisSaverError) -> Self {
        match err {
            RedisSaverError::Missing { .. } | RedisSaverError::Corrupt { .. } => {
                CheckpointError::Corrupt(err.to_string())
            }
            RedisSaverError::Invalid(msg) => CheckpointError::Invalid(msg),
            RedisSaverError::Redis(_) | RedisSaverError::NotReplicated { .. } => {
                CheckpointError::Backend(Box::new(err))
            }
        }
    }
}

impl RedisSaverError {
    /// A [`Corrupt`](Self::Corrupt) error.
    pub(crate) fn corrupt(key: &str, field: &str, reason: impl Into<String>) -> Self {
        Self::Corrupt { key: key.to_owned(), field: field.to_owned(), reason: reason.into() }
    }
}

/// Shorthand for the crate's results.
pub type Result<T, E = RedisSaverError> = std::result::Result<T, E>;
