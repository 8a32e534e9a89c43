//! The crate's one error type: what can stop a worker or the harness (as opposed to a
//! [`Violation`](crate::Violation), which is a finding about the system under test).

use std::path::PathBuf;

/// Why a worker or the harness could not do its job.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server under test could not be reached: the test skips (or fails under `CI`).
    #[error("{backend} at {url} is unreachable")]
    Unreachable {
        /// `mysql` or `redis`.
        backend: &'static str,
        /// Where it was looked for.
        url: String,
        /// The connection error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A graph run or state read failed.
    #[error("graph run failed")]
    Graph(#[from] mnemograph_core::Error),
    /// A checkpointer call made by the harness failed.
    #[error("checkpointer call failed")]
    Checkpoint(#[from] mnemograph_core::checkpoint::CheckpointError),
    /// A MySQL statement of the harness or worker failed.
    #[error("MySQL statement failed")]
    Sql(#[from] sqlx::Error),
    /// A Redis command of the harness or worker failed.
    #[error("Redis command failed")]
    Redis(#[from] redis::RedisError),
    /// Setting up the MySQL saver failed.
    #[error("MySQL saver setup failed")]
    MySqlSaver(#[from] mnemograph_checkpoint_mysql::Error),
    /// Opening the SQLite saver failed.
    #[error("SQLite saver failed")]
    SqliteSaver(#[from] mnemograph_checkpoint_sqlite::Error),
    /// Setting up the Redis saver failed.
    #[error("Redis saver setup failed")]
    RedisSaver(#[from] mnemograph_checkpoint_redis::RedisSaverError),
    /// Reading or writing a journal or spawning a worker failed.
    #[error("I/O on {path}")]
    Io {
        /// The file or program.
        path: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// A journal line is not a record this crate writes.
    #[error("{path} line {line}: malformed journal record {text:?}")]
    Journal {
        /// The journal.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending text.
        text: String,
    },
    /// A worker argument is missing or malformed.
    #[error("worker argument `{name}`: {problem}")]
    Argument {
        /// The argument.
        name: &'static str,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A worker ended other than by finishing its run or being killed by the harness.
    #[error("worker {incarnation} of thread {thread_id} ended with {status}; stderr:\n{stderr}")]
    WorkerFailed {
        /// The thread it was running.
        thread_id: String,
        /// Which process of the thread (0 = the first).
        incarnation: u32,
        /// Its exit status.
        status: std::process::ExitStatus,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A worker did not say it was ready, or did not finish, in time.
    #[error("worker {incarnation} of thread {thread_id}: no {what} within {seconds} s")]
    WorkerTimeout {
        /// The thread it was running.
        thread_id: String,
        /// Which process of the thread.
        incarnation: u32,
        /// What was awaited.
        what: &'static str,
        /// How long the harness waited.
        seconds: u64,
    },
    /// The SQLite file a killed worker wrote is damaged: `PRAGMA integrity_check` on a fresh
    /// connection reported something other than `ok`.
    #[error("{path} fails PRAGMA integrity_check after a kill: {report}")]
    Integrity {
        /// The database file.
        path: PathBuf,
        /// What the check reported.
        report: String,
    },
    /// A killed worker's server sessions were still open after the harness gave up waiting.
    #[error("server sessions {sessions} of a killed worker still open after {seconds} s")]
    SessionsLinger {
        /// The sessions, as the worker announced them.
        sessions: String,
        /// How long the harness waited.
        seconds: u64,
    },
}

impl Error {
    /// An [`Error::Io`] on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
