//! Running a transaction again after InnoDB rolled it back to break a deadlock: such a
//! transaction did nothing, so it can run again as it was, after a short random pause.

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::mysql::MySqlDatabaseError;

use crate::error::Error;
use crate::lock_error::LockError;

/// How many times a put transaction that InnoDB rolled back to break a deadlock is run again.
pub(crate) const DEADLOCK_ATTEMPTS: usize = 8;

/// Whether `err` is InnoDB rolling the transaction back to break a deadlock: the transaction
/// did nothing and can run again.
pub(crate) fn is_deadlock(err: &CheckpointError) -> bool {
    let CheckpointError::Backend(source) = err else { return false };
    let Some(Error::Sqlx(sqlx)) = source.downcast_ref::<Error>() else { return false };
    LockError::of(sqlx) == Some(LockError::Deadlock)
}

/// The server's error number of `err`, when the server reported it.
pub(crate) fn error_number(err: &sqlx::Error) -> Option<u16> {
    let error = err.as_database_error()?.try_downcast_ref::<MySqlDatabaseError>()?;
    Some(error.number())
}

/// A short random pause before running a deadlocked transaction again, growing with `attempt`,
/// so the writers that deadlocked do not meet again at once.
pub(crate) async fn backoff(attempt: usize) {
    let millis = rand::random_range(1..=2u64 << attempt.min(6));
    tokio::time::sleep(Duration::from_millis(millis)).await;
}
