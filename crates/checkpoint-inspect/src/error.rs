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
    /// No URL or no command was given.
    #[error("missing {what}")]
    MissingArgument {
        /// What is missing, e.g. `"<thread> argument"`.
        what: &'static str,
    },
    /// The command is not one of `threads`, `history`, `show`, `graph`.
    #[error("unknown command `{0}` (expected threads, history, show or graph)")]
    UnknownCommand(String),
    /// An option the command does not take.
    #[error("unknown option `{option}` for `{command}`")]
    UnknownOption {
        /// The option as typed.
        option: String,
        /// The command it was given to.
        command: &'static str,
    },
    /// An option that needs a value came last.
    #[error("option `{0}` needs a value")]
    MissingValue(&'static str),
    /// `--limit` was not a positive whole number.
    #[error("`{option}` expects a positive number, got `{value}`")]
    InvalidNumber {
        /// The option.
        option: &'static str,
        /// What was given.
        value: String,
    },
    /// More positional arguments than the command takes.
    #[error("unexpected argument `{0}`")]
    UnexpectedArgument(String),
    /// The URL does not start with `mysql://`, `redis://` or `rediss://`.
    #[error("unsupported URL `{url}` (expected mysql://, redis:// or rediss://)")]
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
        matches!(
            self,
            Self::MissingArgument { .. }
                | Self::UnknownCommand(_)
                | Self::UnknownOption { .. }
                | Self::MissingValue(_)
                | Self::InvalidNumber { .. }
                | Self::UnexpectedArgument(_)
                | Self::UnsupportedScheme { .. }
                | Self::InvalidUrl { .. }
        )
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

/// `url` with the password of its user-info part replaced by `***`, for messages and output.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    // The user info ends at the last `@` before the path; a password may itself contain `@`.
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else { return url.to_owned() };
    let (user_info, host) = (&rest[..at], &rest[at..]);
    match user_info.split_once(':') {
        Some((user, _password)) => format!("{scheme}://{user}:***{host}"),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact("mysql://root:s3cr@t@db:3306/app"), "mysql://root:***@db:3306/app");
        assert_eq!(redact("redis://:pw@127.0.0.1:6379/0"), "redis://:***@127.0.0.1:6379/0");
        assert_eq!(redact("mysql://root@127.0.0.1/app"), "mysql://root@127.0.0.1/app");
        assert_eq!(redact("redis://127.0.0.1/?a=b@c"), "redis://127.0.0.1/?a=b@c");
        assert_eq!(redact("not a url"), "not a url");
    }

    #[test]
    fn usage_errors_exit_with_two() {
        assert_eq!(Error::UnknownCommand("x".into()).exit_code(), 2);
        let unknown = Error::UnknownThread { thread_id: "t".into(), checkpoint_ns: String::new() };
        assert_eq!(unknown.exit_code(), 1);
        assert_eq!(unknown.to_string(), "thread `t` has no checkpoints");
    }
}
