//! From what the caller names (a file path, a `sqlite://` URL, `:memory:`) to the driver's
//! connection and pool options.

use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::error::{Error, Result};

/// How long a statement waits for another connection's lock before failing with
/// [`Error::Busy`]: long enough for any single checkpoint write of another process to finish.
pub const DEFAULT_BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `target` names a database that lives in memory only.
pub(crate) fn is_memory(target: &str) -> bool {
    let bare = target.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    bare == ":memory:" || bare.split_once('?').is_some_and(|(_, q)| q.split('&').any(|p| p == "mode=memory"))
}

/// The connection options for `target`: a file path (created when missing), a `sqlite://` or
/// `sqlite:` URL (sqlx's parameters: `mode`, `cache`, `immutable`, `vfs`), or `:memory:`.
///
/// Every connection uses WAL journaling (readers do not block the writer, as in LangGraph's
/// `setup`), `synchronous = FULL` (a checkpoint acknowledged is on disk), and waits up to
/// [`DEFAULT_BUSY_TIMEOUT`] for a lock before failing with [`Error::Busy`]. Change any of them on
/// the returned options (`.busy_timeout(..)`) and pass them to
/// [`SqliteCheckpointer::connect_with`](crate::SqliteCheckpointer::connect_with).
///
/// # Errors
/// [`Error::Sqlx`] for a malformed URL.
pub fn connect_options(target: &str) -> Result<SqliteConnectOptions> {
    let options = if target.starts_with("sqlite:") || target == ":memory:" {
        let url = if target == ":memory:" { "sqlite::memory:" } else { target };
        SqliteConnectOptions::from_str(url).map_err(|e| Error::driver("open", e))?
    } else {
        SqliteConnectOptions::new().filename(target)
    };
    Ok(options
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(DEFAULT_BUSY_TIMEOUT))
}

/// The pool for `target`. An in-memory database exists only while a connection to it is open,
/// and connections sharing one lock by table without waiting, so it gets one connection, kept
/// for the pool's life.
pub(crate) fn pool_options(target: &str) -> SqlitePoolOptions {
    if is_memory(target) {
        SqlitePoolOptions::new().max_connections(1).min_connections(1).idle_timeout(None).max_lifetime(None)
    } else {
        SqlitePoolOptions::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_targets_are_recognised() {
        for target in [":memory:", "sqlite::memory:", "sqlite://:memory:", "sqlite://x?mode=memory"] {
            assert!(is_memory(target), "{target}");
        }
        for target in ["app.db", "sqlite://app.db", "sqlite:app.db?mode=rwc", "/tmp/memory.db"] {
            assert!(!is_memory(target), "{target}");
        }
    }

    #[test]
    fn paths_and_urls_name_the_same_file() {
        let path = connect_options("/tmp/x/app.db").unwrap();
        let url = connect_options("sqlite:///tmp/x/app.db").unwrap();
        assert_eq!(path.get_filename(), url.get_filename());
    }
}
