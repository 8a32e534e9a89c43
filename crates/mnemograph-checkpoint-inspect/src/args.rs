//! The command line: `checkpoint-inspect [--json] <URL> <command> [options]`, parsed by clap
//! (`args/cli.rs` holds its definition), and turned into the [`Args`] that [`run`](crate::run) takes.
//!
//! Usage errors exit with 2 and say what is wrong, with the usage and a pointer to `--help`.

mod cli;
mod positive;

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{CommandFactory as _, Parser as _};
use clap_complete::Shell;

use crate::error::{Error, Result};

pub(crate) use self::cli::BIN;
use self::cli::{Cli, CliCommand};

pub use self::cli::DEFAULT_THREAD_LIMIT;

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// Where the checkpoints are, e.g. `mysql://root@127.0.0.1/app` or `postgres://postgres@127.0.0.1/app`.
    pub url: String,
    /// Print JSON instead of text.
    pub json: bool,
    /// What to do.
    pub command: Command,
}

/// A command and its own arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Command {
    /// List threads.
    Threads {
        /// At most this many, newest first.
        limit: usize,
    },
    /// One line per checkpoint of a thread.
    History {
        /// The thread.
        thread_id: String,
        /// The namespace (`""`: the root graph).
        checkpoint_ns: String,
        /// At most this many checkpoints, newest first.
        limit: Option<usize>,
        /// A Mermaid file to print above the history.
        graph: Option<PathBuf>,
    },
    /// One checkpoint in full.
    Show {
        /// The thread.
        thread_id: String,
        /// The namespace.
        checkpoint_ns: String,
        /// An id or a unique prefix of one; the latest when `None`.
        checkpoint_id: Option<String>,
    },
    /// The path the thread ran, as Mermaid.
    Graph {
        /// The thread.
        thread_id: String,
        /// The namespace.
        checkpoint_ns: String,
    },
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Run a command against a store.
    Run(Args),
    /// Print the completion script of this shell ([`crate::completions::write`]).
    Completions(Shell),
    /// Print this text on standard output and exit with 0: `--help` or `--version`.
    Print(String),
}

/// Parses the arguments after the program name.
///
/// `--json` may come anywhere; a command's options come after the command, as `--opt value` or
/// `--opt=value`; `--` ends the options, for thread ids starting with `-`.
///
/// # Errors
/// [`Error::CommandLine`] (a usage error: exit code 2) naming what is wrong.
///
/// # Example
/// ```
/// use mnemograph_checkpoint_inspect::args::{parse, Command, Parsed};
///
/// let parsed = parse(["redis://127.0.0.1/", "history", "u42:s7", "--limit", "5"])?;
/// let Parsed::Run(args) = parsed else { unreachable!() };
/// assert!(matches!(args.command, Command::History { limit: Some(5), .. }));
/// # Ok::<(), mnemograph_checkpoint_inspect::Error>(())
/// ```
pub fn parse<I, T>(args: I) -> Result<Parsed>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let argv = std::iter::once(OsString::from(BIN)).chain(args.into_iter().map(Into::into));
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Ok(Parsed::Print(e.render().to_string()));
        }
        Err(e) => return Err(Error::CommandLine(e)),
    };
    let command = match cli.command {
        Some(CliCommand::Completions { shell }) => {
            return match cli.url {
                None => Ok(Parsed::Completions(shell)),
                // The URL is not repeated: it may hold a password.
                Some(_) => Err(usage(ErrorKind::UnknownArgument, "`completions` takes no <URL>")),
            };
        }
        Some(CliCommand::Threads { limit }) => Some(Command::Threads { limit }),
        Some(CliCommand::History { thread, ns, limit, graph }) => {
            Some(Command::History { thread_id: thread, checkpoint_ns: ns.unwrap_or_default(), limit, graph })
        }
        Some(CliCommand::Show { thread, ns, checkpoint }) => Some(Command::Show {
            thread_id: thread,
            checkpoint_ns: ns.unwrap_or_default(),
            checkpoint_id: checkpoint,
        }),
        Some(CliCommand::Graph { thread, ns }) => {
            Some(Command::Graph { thread_id: thread, checkpoint_ns: ns.unwrap_or_default() })
        }
        None => None,
    };
    let Some(url) = cli.url else {
        return Err(usage(ErrorKind::MissingRequiredArgument, "missing <URL> argument"));
    };
    let Some(command) = command else { return Err(usage(ErrorKind::MissingSubcommand, "missing command")) };
    Ok(Parsed::Run(Args { url, json: cli.json, command }))
}

/// A usage error of ours, formatted as clap formats its own (usage lines, pointer to `--help`).
fn usage(kind: ErrorKind, message: impl std::fmt::Display) -> Error {
    Error::CommandLine(Cli::command().error(kind, message))
}

/// The clap definition of the command line, for generating completion scripts.
pub(crate) fn command() -> clap::Command {
    Cli::command()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Args> {
        match parse(args)? {
            Parsed::Run(args) => Ok(args),
            other => panic!("expected a command, got {other:?}"),
        }
    }

    /// The first line of a usage error's message.
    fn first_line(args: &[&str]) -> String {
        let err = run(args).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{args:?}");
        err.to_string().lines().next().unwrap_or_default().to_owned()
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn options_may_come_after_the_command_and_json_anywhere() {
        let args =
            run(&["--json", "mysql://h/db", "show", "t-1", "--checkpoint=1f0", "--ns", "sub"]).unwrap();
        assert!(args.json);
        assert_eq!(
            args.command,
            Command::Show {
                thread_id: "t-1".into(),
                checkpoint_ns: "sub".into(),
                checkpoint_id: Some("1f0".into())
            }
        );
        let args = run(&["redis://h/", "threads", "--json"]).unwrap();
        assert_eq!((args.json, args.command), (true, Command::Threads { limit: DEFAULT_THREAD_LIMIT }));
        let args = run(&["redis://h/", "--json", "threads", "--limit", "3"]).unwrap();
        assert_eq!((args.json, args.command), (true, Command::Threads { limit: 3 }));
        let args = run(&["redis://h/", "history", "--", "-odd-thread"]).unwrap();
        assert!(matches!(args.command, Command::History { thread_id, .. } if thread_id == "-odd-thread"));
        let args = run(&["mysql://h/db", "history", "t", "--graph", "g.mmd", "--limit=2"]).unwrap();
        let expected = Command::History {
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
            limit: Some(2),
            graph: Some("g.mmd".into()),
        };
        assert_eq!(args.command, expected);
    }

    #[test]
    fn mistakes_are_usage_errors() {
        let cases: [(&[&str], &str); 9] = [
            (&[], "missing <URL> argument"),
            (&["mysql://h/db"], "missing command"),
            (&["mysql://h/db", "history"], "the following required arguments were not provided:"),
            (&["mysql://h/db", "hist", "t"], "unrecognized subcommand 'hist'"),
            (&["mysql://h/db", "threads", "--limit", "0"], "`--limit` expects a positive number, got `0`"),
            (&["mysql://h/db", "threads", "--limit", "-3"], "`--limit` expects a positive number, got `-3`"),
            (
                &["mysql://h/db", "threads", "--limit"],
                "a value is required for '--limit <N>' but none was supplied",
            ),
            (&["mysql://h/db", "show", "t", "--limit", "3"], "unexpected argument '--limit' found"),
            (&["mysql://h/db", "graph", "t", "extra"], "unexpected argument 'extra' found"),
        ];
        for (args, message) in cases {
            assert_eq!(first_line(args), message, "{args:?}");
        }
        let err = run(&["mysql://h/db", "histroy", "t"]).unwrap_err().to_string();
        assert!(err.contains("similar subcommand exists: 'history'"), "{err}");
        let err = run(&[]).unwrap_err().to_string();
        assert!(err.contains("<URL> history <thread>") && err.contains("--help"), "{err}");
    }

    #[test]
    fn help_and_version_are_printed() {
        let Ok(Parsed::Print(help)) = parse(["x", "--help"]) else { panic!("no help") };
        assert!(help.contains("checkpoint-inspect [--json] <URL> history <thread>"), "{help}");
        assert!(help.contains("completions") && help.contains("exit codes:"), "{help}");
        let version = parse(["-V"]).unwrap();
        assert_eq!(version, Parsed::Print(format!("checkpoint-inspect {}\n", env!("CARGO_PKG_VERSION"))));
    }

    #[test]
    fn completions_take_a_shell_and_no_url() {
        assert_eq!(parse(["completions", "bash"]).unwrap(), Parsed::Completions(Shell::Bash));
        assert_eq!(parse(["completions", "powershell"]).unwrap(), Parsed::Completions(Shell::PowerShell));
        let err = parse(["completions", "tcsh"]).unwrap_err();
        assert!(err.to_string().starts_with("invalid value 'tcsh' for '<SHELL>'"), "{err}");
        let err = parse(["mysql://u:s3cret@h/db", "completions", "zsh"]).unwrap_err();
        assert_eq!(err.to_string().lines().next(), Some("`completions` takes no <URL>"));
    }
}
