//! The command line, parsed by hand: four commands and a handful of options do not justify an
//! argument-parsing dependency in a tool whose build CI pays for.

use std::path::PathBuf;

use crate::error::{Error, Result};

/// What `--help` prints.
pub const USAGE: &str = "\
checkpoint-inspect: read LangGraph-style checkpoints from MySQL or Redis

usage:
  checkpoint-inspect [--json] <URL> threads [--limit N]
  checkpoint-inspect [--json] <URL> history <thread> [--ns NS] [--limit N] [--graph FILE.mmd]
  checkpoint-inspect [--json] <URL> show <thread> [--checkpoint ID] [--ns NS]
  checkpoint-inspect [--json] <URL> graph <thread> [--ns NS]

URL:
  mysql://user:password@host:3306/database    tables of checkpoint-mysql / langgraph-checkpoint-mysql
  redis://host:6379/0 or rediss://...         keys of checkpoint-redis; add ?key-prefix=P when the
                                              saver was built with another prefix (default graph:cp)

commands:
  threads    thread ids with their checkpoint count and latest step and time, newest first
  history    one line per checkpoint, newest first: id, step, source, nodes that wrote, changes
  show       one checkpoint (default: the latest) decoded: values, versions, metadata, pending writes
  graph      the path the thread actually ran, as a Mermaid flowchart

options:
  --json             machine-readable output (one JSON document)
  --limit N          at most N threads (default 50) or checkpoints (default all)
  --ns NS            checkpoint namespace (default: the root graph, \"\")
  --checkpoint ID    a checkpoint id, or a unique prefix of one
  --graph FILE.mmd   print this Mermaid drawing (e.g. from draw_mermaid) above the history
  -h, --help         this text
  -V, --version      the version

exit codes: 0 success, 1 error (server, data, unknown thread), 2 usage error
";

/// How many threads `threads` lists when `--limit` is not given.
pub const DEFAULT_THREAD_LIMIT: usize = 50;

/// A parsed command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// Where the checkpoints are, e.g. `mysql://root@127.0.0.1/app`.
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
#[non_exhaustive]
pub enum Parsed {
    /// Run a command.
    Run(Args),
    /// Print [`USAGE`].
    Help,
    /// Print the version.
    Version,
}

/// Options given on the command line, before we know which command takes them.
#[derive(Debug, Default)]
struct Options {
    limit: Option<usize>,
    ns: Option<String>,
    checkpoint: Option<String>,
    graph: Option<PathBuf>,
}

/// Parses the arguments after the program name.
///
/// Options may come anywhere (before or after the URL and command); `--opt value` and
/// `--opt=value` are both accepted, and `--` ends the options, for thread ids starting with `-`.
///
/// # Errors
/// A usage error (see [`Error::is_usage`]) naming the offending argument.
///
/// # Example
/// ```
/// use checkpoint_inspect::args::{parse, Command, Parsed};
///
/// let parsed = parse(["redis://127.0.0.1/", "history", "u42:s7", "--limit", "5"].map(String::from))?;
/// let Parsed::Run(args) = parsed else { unreachable!() };
/// assert!(matches!(args.command, Command::History { limit: Some(5), .. }));
/// # Ok::<(), checkpoint_inspect::Error>(())
/// ```
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Parsed> {
    let mut json = false;
    let mut options = Options::default();
    let mut positional = Vec::new();
    let mut args = args.into_iter();
    let mut options_done = false;
    while let Some(arg) = args.next() {
        if options_done || !arg.starts_with('-') || arg == "-" {
            positional.push(arg);
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (arg.clone(), None),
        };
        let mut value =
            |option: &'static str| inline.clone().or_else(|| args.next()).ok_or(Error::MissingValue(option));
        match name.as_str() {
            "--" => options_done = true,
            "-h" | "--help" => return Ok(Parsed::Help),
            "-V" | "--version" => return Ok(Parsed::Version),
            "--json" => json = true,
            "--limit" => options.limit = Some(number("--limit", &value("--limit")?)?),
            "--ns" => options.ns = Some(value("--ns")?),
            "--checkpoint" => options.checkpoint = Some(value("--checkpoint")?),
            "--graph" => options.graph = Some(PathBuf::from(value("--graph")?)),
            _ => {
                let command = positional.get(1).map_or("checkpoint-inspect", |c| command_name(c));
                return Err(Error::UnknownOption { option: arg, command });
            }
        }
    }
    let mut positional = positional.into_iter();
    let url = positional.next().ok_or(Error::MissingArgument { what: "<URL> argument" })?;
    let command = positional.next().ok_or(Error::MissingArgument { what: "command" })?;
    let command = build(&command, &mut positional, options)?;
    if let Some(extra) = positional.next() {
        return Err(Error::UnexpectedArgument(extra));
    }
    Ok(Parsed::Run(Args { url, json, command }))
}

/// The static name of a command, for error messages.
fn command_name(command: &str) -> &'static str {
    match command {
        "threads" => "threads",
        "history" => "history",
        "show" => "show",
        "graph" => "graph",
        _ => "checkpoint-inspect",
    }
}

/// The command `name` with its thread argument and the options it accepts.
fn build(name: &str, positional: &mut impl Iterator<Item = String>, o: Options) -> Result<Command> {
    let command = command_name(name);
    let reject = |given: bool, option: &str| -> Result<()> {
        match given {
            true => Err(Error::UnknownOption { option: option.to_owned(), command }),
            false => Ok(()),
        }
    };
    let mut thread = || positional.next().ok_or(Error::MissingArgument { what: "<thread> argument" });
    let ns = o.ns.clone().unwrap_or_default();
    Ok(match name {
        "threads" => {
            reject(o.ns.is_some(), "--ns")?;
            reject(o.checkpoint.is_some(), "--checkpoint")?;
            reject(o.graph.is_some(), "--graph")?;
            Command::Threads { limit: o.limit.unwrap_or(DEFAULT_THREAD_LIMIT) }
        }
        "history" => {
            reject(o.checkpoint.is_some(), "--checkpoint")?;
            Command::History { thread_id: thread()?, checkpoint_ns: ns, limit: o.limit, graph: o.graph }
        }
        "show" => {
            reject(o.limit.is_some(), "--limit")?;
            reject(o.graph.is_some(), "--graph")?;
            Command::Show { thread_id: thread()?, checkpoint_ns: ns, checkpoint_id: o.checkpoint }
        }
        "graph" => {
            reject(o.limit.is_some(), "--limit")?;
            reject(o.checkpoint.is_some(), "--checkpoint")?;
            reject(o.graph.is_some(), "--graph")?;
            Command::Graph { thread_id: thread()?, checkpoint_ns: ns }
        }
        other => return Err(Error::UnknownCommand(other.to_owned())),
    })
}

/// A positive count.
fn number(option: &'static str, value: &str) -> Result<usize> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Error::InvalidNumber { option, value: value.to_owned() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> Result<Args> {
        match parse(args.iter().map(|s| (*s).to_owned()))? {
            Parsed::Run(args) => Ok(args),
            other => panic!("expected a command, got {other:?}"),
        }
    }

    #[test]
    fn options_may_come_anywhere() {
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
        let args = run(&["redis://h/", "history", "--", "-odd-thread"]).unwrap();
        assert!(matches!(args.command, Command::History { thread_id, .. } if thread_id == "-odd-thread"));
    }

    #[test]
    fn mistakes_are_usage_errors() {
        let cases: [(&[&str], &str); 8] = [
            (&[], "missing <URL> argument"),
            (&["mysql://h/db"], "missing command"),
            (&["mysql://h/db", "history"], "missing <thread> argument"),
            (
                &["mysql://h/db", "hist", "t"],
                "unknown command `hist` (expected threads, history, show or graph)",
            ),
            (&["mysql://h/db", "threads", "--limit", "0"], "`--limit` expects a positive number, got `0`"),
            (&["mysql://h/db", "threads", "--limit"], "option `--limit` needs a value"),
            (&["mysql://h/db", "show", "t", "--limit", "3"], "unknown option `--limit` for `show`"),
            (&["mysql://h/db", "graph", "t", "extra"], "unexpected argument `extra`"),
        ];
        for (args, message) in cases {
            let err = run(args).unwrap_err();
            assert_eq!(err.to_string(), message, "{args:?}");
            assert_eq!(err.exit_code(), 2);
        }
        assert!(matches!(
            run(&["mysql://h/db", "threads", "--colour"]),
            Err(Error::UnknownOption { command: "threads", .. })
        ));
    }

    #[test]
    fn help_and_version_win() {
        assert_eq!(parse(["x".to_owned(), "--help".to_owned()]).unwrap(), Parsed::Help);
        assert_eq!(parse(["-V".to_owned()]).unwrap(), Parsed::Version);
    }
}
