//! [`LockError`]: a statement that MySQL or MariaDB refused over a row lock, told apart by the
//! server's error number (never by its message, which changes between versions and languages).

use sqlx::mysql::MySqlDatabaseError;

/// MySQL's `ER_LOCK_DEADLOCK`.
const ER_LOCK_DEADLOCK: u16 = 1213;
/// MySQL's and MariaDB's `ER_LOCK_WAIT_TIMEOUT`; MariaDB also reports a `NOWAIT` lock held by
/// another transaction with it.
const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
/// MySQL 8's `ER_LOCK_NOWAIT`.
const ER_LOCK_NOWAIT: u16 = 3572;

/// Why the server refused a statement over a row lock.
///
/// ```
/// use mnemograph_checkpoint_mysql::LockError;
///
/// fn may_run_again(err: &sqlx::Error) -> bool {
///     LockError::of(err) == Some(LockError::Deadlock)
/// }
/// # let _ = may_run_again;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockError {
    /// InnoDB rolled the whole transaction back to break a deadlock: it did nothing, and can run
    /// again as it was.
    Deadlock,
    /// Another transaction held the lock for longer than the wait allowed, or at all for a
    /// `NOWAIT` lock. Only the statement was undone; the transaction is still open.
    Busy,
}

impl LockError {
    /// What `err` says, when the server refused a statement over a lock.
    pub fn of(err: &sqlx::Error) -> Option<Self> {
        let error = err.as_database_error()?.try_downcast_ref::<MySqlDatabaseError>()?;
        Self::of_number(error.number())
    }

    /// What the server's error number `number` says, when it is a lock's.
    pub(crate) fn of_number(number: u16) -> Option<Self> {
        match number {
            ER_LOCK_DEADLOCK => Some(Self::Deadlock),
            ER_LOCK_WAIT_TIMEOUT | ER_LOCK_NOWAIT => Some(Self::Busy),
            _ => None,
        }
    }
}
