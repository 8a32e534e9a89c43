//! The crate's error type, and how driver errors are sorted into it.

use mnemograph_checkpoint::checkpoint::serde::SerdeError;
use mnemograph_checkpoint::checkpoint::CheckpointError;
use mnemograph_checkpoint::store::CorruptRow;

/// A failure of the SQLite checkpointer or store.
///
/// Through the [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) trait it arrives
/// wrapped in [`CheckpointError::Backend`]; get it back with a downcast:
///
/// ```
/// use mnemograph_checkpoint::checkpoint::CheckpointError;
/// use mnemograph_checkpoint_sqlite::Error;
///
/// /// Whether another connection held the database's write lock for longer than the busy timeout.
/// fn is_busy(err: &CheckpointError) -> bool {
///     match err {
///         CheckpointError::Backend(source) => source.downcast_ref::<Error>().is_some_and(Error::is_busy),
///         _ => false,
///     }
/// }
/// # let _ = is_busy;
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Another connection (of this process or another) kept the database locked for longer than
    /// the busy timeout, so `operation` gave up and changed nothing. Retrying later is safe.
    #[error("the database stayed locked by another connection past the busy timeout during {operation}")]
    Busy {
        /// What was being done: `put`, `put_writes`, `get_tuple`, ...
        operation: &'static str,
        /// What SQLite said (`SQLITE_BUSY` or `SQLITE_LOCKED`).
        #[source]
        source: sqlx::Error,
    },
    /// The driver failed: a file that cannot be opened, a malformed URL, a full disk, a statement
    /// SQLite rejected.
    #[error("sqlite driver error during {operation}")]
    Sqlx {
        /// What was being done.
        operation: &'static str,
        /// What the driver said.
        #[source]
        source: sqlx::Error,
    },
    /// A row of the store's `store` table does not decode: its value is not a JSON object, or a
    /// timestamp is unreadable. Other items read and write as before.
    #[error("store item {key:?} in namespace {namespace:?} is corrupt: {reason}")]
    CorruptItem {
        /// The item's namespace, as the `prefix` column holds it.
        namespace: String,
        /// The item's key.
        key: String,
        /// What does not decode.
        reason: String,
    },
    /// A channel value or pending write could not be encoded. (Stored data that cannot be decoded
    /// is reported as [`CheckpointError::Corrupt`] instead.)
    #[error("checkpoint serialization failed")]
    Codec(#[from] SerdeError),
}

impl Error {
    /// Sorts a driver error met during `operation`: `SQLITE_BUSY` and `SQLITE_LOCKED`, with
    /// any extended code, are [`Error::Busy`].
    pub(crate) fn driver(operation: &'static str, source: sqlx::Error) -> Self {
        if is_lock_error(&source) {
            Self::Busy { operation, source }
        } else {
            Self::Sqlx { operation, source }
        }
    }

    /// Whether this is [`Error::Busy`].
    pub fn is_busy(&self) -> bool {
        matches!(self, Self::Busy { .. })
    }
}

/// Whether SQLite refused because another connection holds a lock: primary result code 5
/// (`SQLITE_BUSY`) or 6 (`SQLITE_LOCKED`); extended codes keep the primary one in the low byte.
fn is_lock_error(err: &sqlx::Error) -> bool {
    let sqlx::Error::Database(db) = err else { return false };
    let code = db.code().and_then(|c| c.parse::<i64>().ok());
    code.is_some_and(|c| matches!(c & 0xff, 5 | 6))
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

/// A closure for `map_err` that sorts a driver error met during `operation` and wraps it for
/// the trait.
pub(crate) fn backend(operation: &'static str) -> impl Fn(sqlx::Error) -> CheckpointError {
    move |source| Error::driver(operation, source).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_errors_downcast_back() {
        let err: CheckpointError = Error::driver("put", sqlx::Error::PoolTimedOut).into();
        let CheckpointError::Backend(source) = &err else { panic!("{err:?}") };
        let ours = source.downcast_ref::<Error>().expect("our error");
        assert!(matches!(ours, Error::Sqlx { operation: "put", source: sqlx::Error::PoolTimedOut }));
        assert!(!ours.is_busy());
    }
}
