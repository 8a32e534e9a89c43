//! # mnemograph-checkpoint-inspect
//!
//! An operator's view of the checkpoints mnemograph-core writes (and LangGraph's Python MySQL,
//! Postgres and SQLite savers write): list threads, walk a thread's history one line per checkpoint, decode a whole
//! checkpoint (msgpack blobs and LangChain messages included) to JSON, and draw the path a thread
//! actually ran. The binary is a thin shell over [`run`]:
//!
//! ```no_run
//! use mnemograph_checkpoint_inspect::args::{parse, Parsed};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mnemograph_checkpoint_inspect::Error> {
//! // Needs a server: MariaDB with mnemograph-checkpoint-mysql's tables in database `app`.
//! let argv = ["mysql://root@127.0.0.1:3306/app", "history", "u42:s7", "--limit", "3"];
//! if let Parsed::Run(args) = parse(argv)? {
//!     mnemograph_checkpoint_inspect::run(&args, &mut std::io::stdout()).await?;
//! }
//! // 1f1ec79d-51ea-61ba-8001-…  step 1   loop   call_model  messages +1 (ai: "根据你上周的描述…")
//! // 1f1ec79d-51e7-6287-8000-…  step 0   loop   __start__   messages +1 (human: "我们之前讨论过的…")
//! // 1f1ec79d-51e2-62d4-bfff-…  step -1  input              messages +1 (human: "我们之前讨论过的…")
//! # Ok(()) }
//! ```
//!
//! The pieces work without a server too, e.g. summarising a checkpoint against its parent:
//!
//! ```
//! use mnemograph_checkpoint_inspect::render::summary::Entry;
//! use mnemograph_checkpoint_inspect::snapshot::{RawCheckpoint, Snapshot};
//! use serde_json::json;
//!
//! let raw = |id: &str, step: i64, seen: serde_json::Value, messages: serde_json::Value| {
//!     Snapshot::from_raw(RawCheckpoint {
//!         checkpoint_id: id.into(),
//!         document: json!({"ts": "2026-01-02T03:04:05+00:00", "channel_values": {"messages": messages},
//!                          "channel_versions": {"messages": id}, "versions_seen": seen}),
//!         metadata: json!({"source": "loop", "step": step}),
//!         ..RawCheckpoint::default()
//!     })
//! };
//! let human = json!({"type": "human", "content": "我们之前讨论过的 RAG 优化方案改了哪些参数？", "id": "h1"});
//! let ai = json!({"type": "ai", "content": "根据你上周的描述，chunk_size 从 512 调到了 256。", "id": "a1"});
//! let parent = raw("1", 0, json!({}), json!([human.clone()]));
//! let mut cur = raw("2", 1, json!({"call_model": {"messages": "1"}}), json!([human, ai]));
//! cur.parent_id = Some("1".into());
//! let entry = Entry::new(&cur, Some(&parent), true);
//! assert_eq!(entry.nodes, ["call_model"]);
//! assert_eq!(entry.summary_line(), "messages +1 (ai: \"根据你上周的描述，chunk_siz…\")");
//! ```
//!
//! ## Layout
//! - [`args`]: the command line, parsed by clap (usage errors exit with 2); [`completions`]:
//!   the shell completion scripts generated from it (`checkpoint-inspect completions bash`).
//! - [`source`]: MySQL, Postgres, SQLite and Redis, read alike through the savers' public API:
//!   `Checkpointer::list`/`get_tuple`, and their `StoredView` for listing threads and for a raw
//!   read path that decodes value by value when a saver refuses a thread because something
//!   stored is corrupt.
//! - [`decode`]: stored values to JSON; undecodable bytes are kept as base64 with the reason.
//! - [`snapshot`]: one decoded checkpoint, whatever its origin.
//! - [`render`]: summaries (`messages +1 (ai: "…")`), Mermaid paths, text and JSON output.

pub mod args;
pub mod completions;
pub mod decode;
mod error;
pub mod render;
pub mod snapshot;
pub mod source;

use std::io::Write;

pub use error::{BoxError, Error, Result};

use args::{Args, Command};
use render::graph::{highlight, lineage, Path};
use render::summary::{entries, Entry};
use source::Source;

/// Runs one command and writes its output (text, or JSON with `--json`) to `out`.
///
/// # Errors
/// [`Error::UnsupportedScheme`], [`Error::InvalidUrl`] or [`Error::Unreachable`] before
/// anything is read; [`Error::UnknownThread`] / [`Error::UnknownCheckpoint`] /
/// [`Error::AmbiguousCheckpoint`] when the thread or checkpoint is not there; [`Error::Backend`]
/// when a query fails; [`Error::ReadFile`] for an unreadable `--graph` file;
/// [`Error::Output`] when `out` fails.
pub async fn run(args: &Args, out: &mut dyn Write) -> Result<()> {
    // Read the drawing first: a wrong path should not cost a connection.
    let drawing = match &args.command {
        Command::History { graph: Some(path), .. } => Some(
            std::fs::read_to_string(path)
                .map_err(|source| Error::ReadFile { path: path.display().to_string(), source })?,
        ),
        _ => None,
    };
    let source = Source::connect(&args.url).await?;
    match &args.command {
        Command::Threads { limit } => {
            let threads = source.threads(*limit).await?;
            match args.json {
                true => json(out, &render::threads_json(&threads)),
                false => Ok(render::text::threads(out, &threads)?),
            }
        }
        Command::History { thread_id, checkpoint_ns, limit, .. } => {
            // One more than shown, so the oldest line shown can be compared with its parent.
            let history = source.history(thread_id, checkpoint_ns, limit.map(|l| l + 1)).await?;
            if history.is_empty() {
                return Err(unknown(thread_id, checkpoint_ns));
            }
            let mut listed = entries(&history);
            listed.truncate(limit.unwrap_or(usize::MAX));
            let drawing = drawing.map(|d| {
                let mut ran: Vec<String> = Vec::new();
                for node in listed.iter().rev().flat_map(|e| &e.nodes) {
                    if !ran.contains(node) {
                        ran.push(node.clone());
                    }
                }
                highlight(&d, &ran)
            });
            match args.json {
                true => {
                    json(out, &render::history_json(thread_id, checkpoint_ns, &listed, drawing.as_deref()))
                }
                false => Ok(render::text::history(out, &listed, drawing.as_deref())?),
            }
        }
        Command::Show { thread_id, checkpoint_ns, checkpoint_id } => {
            let snap = source.resolve(thread_id, checkpoint_ns, checkpoint_id.as_deref()).await?;
            let parent = match &snap.parent_id {
                Some(p) => source.checkpoint(thread_id, checkpoint_ns, Some(p)).await?,
                None => None,
            };
            let newest = match checkpoint_id {
                None => true,
                Some(_) => source
                    .checkpoint(thread_id, checkpoint_ns, None)
                    .await?
                    .is_some_and(|latest| latest.checkpoint_id == snap.checkpoint_id),
            };
            let entry = Entry::new(&snap, parent.as_ref(), newest);
            match args.json {
                true => json(out, &render::show_json(&snap, &entry)),
                false => Ok(render::text::show(out, &snap, &entry)?),
            }
        }
        Command::Graph { thread_id, checkpoint_ns } => {
            let history = source.history(thread_id, checkpoint_ns, None).await?;
            if history.is_empty() {
                return Err(unknown(thread_id, checkpoint_ns));
            }
            let listed = lineage(&entries(&history));
            let path = Path::from_entries(&listed);
            let mermaid = path.to_mermaid(&format!("path of thread {thread_id}"));
            match args.json {
                true => json(out, &render::graph_json(thread_id, checkpoint_ns, &listed, &path, &mermaid)),
                false => Ok(write!(out, "{mermaid}")?),
            }
        }
    }
}

fn unknown(thread_id: &str, ns: &str) -> Error {
    Error::UnknownThread { thread_id: thread_id.to_owned(), checkpoint_ns: ns.to_owned() }
}

/// Writes one pretty-printed JSON document and a newline.
fn json(out: &mut dyn Write, value: &serde_json::Value) -> Result<()> {
    writeln!(out, "{}", render::text::pretty(value))?;
    Ok(())
}
