//! The crate's one error type, and the exit code each kind of error maps to.

/// A boxed error from a driver or a saver, kept as the source of [`Error`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong, from a mistyped command line to an unreachable server.
///
/// Usage errors (the command line itself is wrong) exit with code 2, everything else with 1;
/// see [`Error::exit_code`]. Messages are lowercase and never repeat their source: `main` prints
/// the chain of sources below the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The command line is wrong: a missing URL or command, an unknown command or option, a
    /// missing or bad value. The message is clap's, followed by the usage lines and a pointer to
    /// `--help`.
    #[error("{}", command_line_message(.0))]
    CommandLine(clap::Error),
    /// The URL does not start with `mysql://`, `postgres://`, `sqlite://` (or `sqlite:`),
    /// `redis://` or `rediss://`.
    #[error("unsupported URL `{url}` (expected mysql://, postgres://, sqlite://, redis:// or rediss://)")]
    UnsupportedScheme {
        /// The URL, password removed.
        url: String,
    },
    /// The URL has the right scheme but cannot be parsed.
    #[error("invalid URL `{url}`")]
    InvalidUrl {
        /// The URL, password removed.
        url: String,
        /// What the driver reported.
        #[source]
        source: BoxError,
    },
    /// The server could not be reached or refused the connection.
    #[error("cannot connect to {url}")]
    Unreachable {
        /// The URL, password removed.
        url: String,
        /// What the driver reported.
        #[source]
        source: BoxError,
    },
    /// The SQLite file the URL names does not exist; it is not created.
    #[error("no SQLite database at `{path}`")]
    MissingFile {
        /// The file's path, as the URL names it.
        path: String,
    },
    /// The file the URL names is not a SQLite database.
    #[error("`{path}` is not a SQLite database")]
    NotSqlite {
        /// The file's path.
        path: String,
        /// What SQLite reported.
        #[source]
        source: BoxError,
    },
    /// The SQLite database lacks the tables of LangGraph's SQLite saver (`checkpoints`, and
    /// `writes` with its `task_path` column); it is left as it is.
    #[error("`{path}` has no checkpoint tables (`checkpoints`, `writes` with `task_path`)")]
    NoCheckpointTables {
        /// The file's path.
        path: String,
    },
    /// A query failed after connecting.
    #[error("reading from {url} failed")]
    Backend {
        /// The URL, password removed.
        url: String,
        /// What the driver or saver reported.
        #[source]
        source: BoxError,
    },
    /// The thread has no checkpoint in the namespace.
    #[error("thread `{thread_id}` has no checkpoints{}", ns_suffix(.checkpoint_ns))]
    UnknownThread {
        /// The thread asked for.
        thread_id: String,
        /// The namespace asked for.
        checkpoint_ns: String,
    },
    /// No checkpoint of the thread has this id (or an id starting with it).
    #[error("thread `{thread_id}` has no checkpoint `{checkpoint_id}`")]
    UnknownCheckpoint {
        /// The thread.
        thread_id: String,
        /// The id or prefix asked for.
        checkpoint_id: String,
    },
    /// Several checkpoints start with the given prefix.
    #[error("checkpoint prefix `{prefix}` matches {count} checkpoints of thread `{thread_id}`; give more of the id")]
    AmbiguousCheckpoint {
        /// The thread.
        thread_id: String,
        /// The prefix asked for.
        prefix: String,
        /// How many ids start with it.
        count: usize,
    },
    /// The `--graph` file could not be read.
    #[error("cannot read `{path}`")]
    ReadFile {
        /// The path given.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Writing to standard output failed (e.g. a closed pipe).
    #[error("cannot write the output")]
    Output(#[from] std::io::Error),
}

/// clap's rendering of `e` without its leading `error: `, which `main` prints for every error.
fn command_line_message(e: &clap::Error) -> String {
    let text = e.render().to_string();
    text.strip_prefix("error: ").unwrap_or(&text).trim_end().to_owned()
}

fn ns_suffix(ns: &str) -> String {
    if ns.is_empty() {
        String::new()
    } else {
        format!(" in namespace `{ns}`")
    }
}

impl Error {
    /// Whether the command line itself is wrong (as opposed to the data or the server).
    pub fn is_usage(&self) -> bool {
        matches!(self, Self::CommandLine(_) | Self::UnsupportedScheme { .. } | Self::InvalidUrl { .. })
    }

    /// The process exit code: 2 for usage errors, 1 for everything else.
    pub fn exit_code(&self) -> i32 {
        if self.is_usage() {
            2
        } else {
            1
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_exit_with_two() {
        let usage = Error::UnsupportedScheme { url: "postgres://h/db".into() };
        assert_eq!(usage.exit_code(), 2);
        let unknown = Error::UnknownThread { thread_id: "t".into(), checkpoint_ns: String::new() };
        assert_eq!(unknown.exit_code(), 1);
        assert_eq!(unknown.to_string(), "thread `t` has no checkpoints");
    }
}
