//! The command line as clap sees it: the options and commands, and the help text around them.
//!
//! `<URL>` is optional here so that `completions <SHELL>` can go without it, and so that a
//! missing URL or command gets a message of its own (see [`super::parse`]).

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use clap_complete::Shell;

use super::positive::Positive;

/// How many threads `threads` lists when `--limit` is not given.
pub const DEFAULT_THREAD_LIMIT: usize = 50;

/// The program name in usage lines and completion scripts.
pub(crate) const BIN: &str = "checkpoint-inspect";

/// The usage lines of every command, as `--help` shows them.
const USAGE: &str = "\
checkpoint-inspect [--json] <URL> threads [--limit N]
       checkpoint-inspect [--json] <URL> history <thread> [--ns NS] [--limit N] [--graph FILE.mmd]
       checkpoint-inspect [--json] <URL> show <thread> [--checkpoint ID] [--ns NS]
       checkpoint-inspect [--json] <URL> graph <thread> [--ns NS]
       checkpoint-inspect completions <SHELL>";

/// What `--help` adds below the options: the URL forms and the exit codes.
const AFTER_HELP: &str = "\
URL:
  mysql://user:password@host:3306/database    tables of mnemograph-checkpoint-mysql / langgraph-checkpoint-mysql
  postgres://user:password@host:5432/database tables of mnemograph-checkpoint-postgres / langgraph-checkpoint-postgres
  sqlite://PATH or sqlite:PATH                tables of mnemograph-checkpoint-sqlite / langgraph-checkpoint-sqlite;
                                              the file is opened read-only and never created
  redis://host:6379/0 or rediss://...         keys of mnemograph-checkpoint-redis; add ?key-prefix=P when the
                                              saver was built with another prefix (default graph:cp)

exit codes: 0 success, 1 error (server, data, unknown thread), 2 usage error";

/// The whole command line.
#[derive(Debug, Parser)]
#[command(
    name = BIN,
    version,
    about = "checkpoint-inspect: read LangGraph-style checkpoints from MySQL, Postgres, SQLite or Redis",
    override_usage = USAGE,
    after_help = AFTER_HELP,
    subcommand_value_name = "COMMAND",
    disable_help_subcommand = true
)]
pub(crate) struct Cli {
    /// Machine-readable output (one JSON document)
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Where the checkpoints are: mysql://…, postgres://…, sqlite://…, redis://… or rediss://… (see URL below)
    #[arg(value_name = "URL")]
    pub(crate) url: Option<String>,
    /// What to do.
    #[command(subcommand)]
    pub(crate) command: Option<CliCommand>,
}

/// The commands, each with the options it takes.
#[derive(Debug, Subcommand)]
pub(crate) enum CliCommand {
    /// Thread ids with their checkpoint count and latest step and time, newest first
    #[command(override_usage = "checkpoint-inspect [--json] <URL> threads [--limit N]")]
    Threads {
        /// At most N threads
        #[arg(long, value_name = "N", default_value_t = DEFAULT_THREAD_LIMIT, value_parser = Positive,
              allow_negative_numbers = true)]
        limit: usize,
    },
    /// One line per checkpoint, newest first: id, step, source, nodes that wrote, changes
    #[command(override_usage = "checkpoint-inspect [--json] <URL> history <thread> [--ns NS] [--limit N] \
                                [--graph FILE.mmd]")]
    History {
        /// The thread id (after `--` when it starts with `-`)
        #[arg(value_name = "thread")]
        thread: String,
        /// Checkpoint namespace [default: the root graph, ""]
        #[arg(long, value_name = "NS")]
        ns: Option<String>,
        /// At most N checkpoints [default: all]
        #[arg(long, value_name = "N", value_parser = Positive, allow_negative_numbers = true)]
        limit: Option<usize>,
        /// Print this Mermaid drawing (e.g. from draw_mermaid) above the history
        #[arg(long, value_name = "FILE.mmd")]
        graph: Option<PathBuf>,
    },
    /// One checkpoint (default: the latest) decoded: values, versions, metadata, pending writes
    #[command(
        override_usage = "checkpoint-inspect [--json] <URL> show <thread> [--checkpoint ID] [--ns NS]"
    )]
    Show {
        /// The thread id (after `--` when it starts with `-`)
        #[arg(value_name = "thread")]
        thread: String,
        /// Checkpoint namespace [default: the root graph, ""]
        #[arg(long, value_name = "NS")]
        ns: Option<String>,
        /// A checkpoint id, or a unique prefix of one [default: the latest]
        #[arg(long, value_name = "ID")]
        checkpoint: Option<String>,
    },
    /// The path the thread actually ran, as a Mermaid flowchart
    #[command(override_usage = "checkpoint-inspect [--json] <URL> graph <thread> [--ns NS]")]
    Graph {
        /// The thread id (after `--` when it starts with `-`)
        #[arg(value_name = "thread")]
        thread: String,
        /// Checkpoint namespace [default: the root graph, ""]
        #[arg(long, value_name = "NS")]
        ns: Option<String>,
    },
    /// Print a completion script for SHELL (bash, zsh, fish, powershell, elvish)
    #[command(override_usage = "checkpoint-inspect completions <SHELL>")]
    Completions {
        /// The shell to complete in
        #[arg(value_name = "SHELL")]
        shell: Shell,
    },
}
