//! The crate's error type.

use mnemograph_checkpoint::checkpoint::CheckpointError;

use mnemograph_checkpoint::checkpoint::serde::SerdeError;

/// A failure of the MySQL checkpointer.
///
/// Through the [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) trait it arrives wrapped in
/// [`CheckpointError::Backend`]; get it back with a downcast:
///
/// ```
/// use mnemograph_checkpoint_mysql::Error;
/// use mnemograph_checkpoint::checkpoint::CheckpointError;
///
/// fn is_connection_problem(err: &CheckpointError) -> bool {
///     match err {
///         CheckpointError::Backend(source) => matches!(
///             source.downcast_ref::<Error>(),
///             Some(Error::Sqlx(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut))
///         ),
///         _ => false,
///     }
/// }
/// # let _ = is_connection_problem;
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The driver failed: connection, TLS, pool timeout, or a statement the server rejected.
    #[error("mysql driver error")]
    Sqlx(#[from] sqlx::Error),
    /// A schema migration failed. Earlier migrations stay applied (MySQL DDL is not
    /// transactional); running [`setup`](crate::MySqlCheckpointer::setup) again resumes at
    /// `version`.
    #[error("schema migration v{version} failed")]
    Migrate {
        /// The migration that failed (its row in `checkpoint_migrations` was not written).
        version: usize,
        /// What the server said.
        #[source]
        source: sqlx::Error,
    },
    /// Another process held the setup lock for longer than the wait allowed.
    #[error("timed out after {seconds} s waiting for the setup lock `{name}`")]
    SetupLock {
        /// The `GET_LOCK` name.
        name: String,
        /// How long `setup` waited.
        seconds: u32,
    },
    /// Another writer of a thread's first checkpoint (both expecting the thread to be empty)
    /// held the namespace's lock for longer than the wait allowed.
    #[error("timed out after {seconds} s waiting for another writer of the first checkpoint of thread `{thread_id}`")]
    WriterLock {
        /// The thread written.
        thread_id: String,
        /// How long the put waited.
        seconds: u64,
    },
    /// The schema found is not the one this saver writes (e.g. the shallow saver's tables in a
    /// database migrated for the full saver).
    #[error("table `{table}` does not have the expected layout (column `{column}`)")]
    Schema {
        /// The table checked.
        table: &'static str,
        /// The column that is missing or unexpected.
        column: &'static str,
    },
    /// A channel value, pending write or checkpoint document could not be encoded. (Stored data
    /// that cannot be decoded is reported as
    /// [`CheckpointError::Corrupt`](mnemograph_checkpoint::checkpoint::CheckpointError::Corrupt) instead.)
    #[error("checkpoint serialization failed")]
    Codec(#[from] SerdeError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for CheckpointError {
    fn from(err: Error) -> Self {
        CheckpointError::Backend(Box::new(err))
    }
}

/// Lets `?` turn a driver error straight into the trait's error.
pub(crate) fn backend(err: sqlx::Error) -> CheckpointError {
    Error::Sqlx(err).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_errors_downcast_back() {
        let err: CheckpointError = Error::Sqlx(sqlx::Error::PoolTimedOut).into();
        let CheckpointError::Backend(source) = &err else { panic!("{err:?}") };
        assert!(matches!(source.downcast_ref::<Error>(), Some(Error::Sqlx(sqlx::Error::PoolTimedOut))));
    }

    #[test]
    fn sources_are_not_repeated_in_messages() {
        let err = Error::Migrate { version: 7, source: sqlx::Error::PoolClosed };
        assert_eq!(err.to_string(), "schema migration v7 failed");
        assert!(std::error::Error::source(&err).is_some());
    }
}
