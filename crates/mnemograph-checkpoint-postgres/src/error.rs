//! The crate's error type.

use mnemograph_checkpoint::checkpoint::serde::SerdeError;
use mnemograph_checkpoint::checkpoint::CheckpointError;
use mnemograph_checkpoint::store::CorruptRow;

/// A failure of the Postgres checkpointer or store.
///
/// Through the [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) trait it arrives
/// wrapped in [`CheckpointError::Backend`]; get it back with a downcast:
///
/// ```
/// use mnemograph_checkpoint::checkpoint::CheckpointError;
/// use mnemograph_checkpoint_postgres::Error;
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
    #[error("postgres driver error")]
    Sqlx(#[from] sqlx::Error),
    /// A schema migration failed. The migrations before it stay applied and recorded; running
    /// [`setup`](crate::PostgresCheckpointer::setup) (or opening the
    /// [`PostgresStore`](crate::PostgresStore)) again resumes at `version`.
    #[error("schema migration v{version} failed")]
    Migrate {
        /// The migration that failed (its row in `checkpoint_migrations`, or the store's
        /// `store_migrations`, was not written).
        version: usize,
        /// What the server said.
        #[source]
        source: sqlx::Error,
    },
    /// The database records a migration newer than any this crate knows: a newer LangGraph
    /// saver migrated it, and this one may not write what that schema expects.
    #[error("the database is at schema v{found}, newer than v{known}, the latest this saver knows")]
    SchemaTooNew {
        /// The highest version in `checkpoint_migrations`.
        found: i64,
        /// The highest version this crate applies.
        known: usize,
    },
    /// The database records a store migration newer than any this crate knows (in
    /// `store_migrations`): a newer LangGraph store migrated it, and this one may not write what
    /// that schema expects.
    #[error("the store is at schema v{found}, newer than v{known}, the latest this store knows")]
    StoreSchemaTooNew {
        /// The highest version in `store_migrations`.
        found: i64,
        /// The highest version this crate applies.
        known: usize,
    },
    /// The server refused to create the store's `store_vectors` table (or, with pgvector,
    /// LangGraph's vector migrations: the extension, the table, its HNSW index).
    #[error("creating the store's vector table failed")]
    VectorSetup {
        /// What the server said.
        #[source]
        source: sqlx::Error,
    },
    /// `store_vectors.embedding` is of a type this store cannot read vectors from (it reads
    /// pgvector's `vector` and `halfvec`, and `real[]`).
    #[error("store_vectors.embedding is of type {found}, not vector, halfvec or real[]")]
    UnknownVectorColumn {
        /// The column's type, as `pg_type` names it.
        found: String,
    },
    /// The pgvector column of `store_vectors` holds vectors of another length than the index's
    /// model makes: the database was set up for another model.
    #[error("store_vectors holds vectors of {column} dimensions, but the index embeds {index}")]
    VectorDims {
        /// The dimension of the `embedding` column.
        column: usize,
        /// The dimension of the index's model.
        index: usize,
    },
    /// A row of the store's `store` table does not decode: its value is not a JSON object, or a
    /// timestamp is NULL. Other items read and write as before.
    #[error("store item {key:?} in namespace {namespace:?} is corrupt: {reason}")]
    CorruptItem {
        /// The item's namespace, as the `prefix` column holds it.
        namespace: String,
        /// The item's key.
        key: String,
        /// What does not decode.
        reason: String,
    },
    /// A store item's key or value holds U+0000, which PostgreSQL text and JSONB cannot hold.
    /// Nothing was written.
    #[error("store item {key:?} in namespace {namespace:?} holds U+0000, which PostgreSQL cannot store")]
    NulInItem {
        /// The item's namespace, labels joined by `.`.
        namespace: String,
        /// The item's key.
        key: String,
    },
    /// A channel value, pending write or checkpoint document could not be encoded. (Stored data
    /// that cannot be decoded is reported as
    /// [`CheckpointError::Corrupt`](mnemograph_checkpoint::checkpoint::CheckpointError::Corrupt).)
    #[error("checkpoint serialization failed")]
    Codec(#[from] SerdeError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<CorruptRow> for Error {
    fn from(CorruptRow { namespace, key, reason }: CorruptRow) -> Self {
        Error::CorruptItem { namespace, key, reason }
    }
}

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
