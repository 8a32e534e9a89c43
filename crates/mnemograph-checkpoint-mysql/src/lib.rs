//! # mnemograph-checkpoint-mysql
//!
//! A MySQL/MariaDB [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) for mnemograph-core, storing
//! checkpoints in the tables and row format of LangGraph's Python MySQL saver
//! (`langgraph-checkpoint-mysql`), so Python and Rust services can share one database.
//!
//! ```no_run
//! use mnemograph_checkpoint_mysql::MySqlCheckpointer;
//! use mnemograph_checkpoint::checkpoint::{CheckpointConfig, Checkpointer, ListOptions};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Needs a running server, e.g. MariaDB on 127.0.0.1:3306 with an `app` database.
//! let saver = MySqlCheckpointer::connect("mysql://root@127.0.0.1:3306/app?max-connections=5").await?;
//! saver.setup().await?; // creates or upgrades the tables; a no-op when current
//!
//! // Usually the graph does the saving: `StateGraph::compile_with(saver)`. Reading a thread:
//! let thread = CheckpointConfig::thread("user-42");
//! if let Some(latest) = saver.get_tuple(&thread).await? {
//!     println!("step {} at {}", latest.metadata.step, latest.checkpoint.ts);
//! }
//! for tuple in saver.list(Some(&thread), ListOptions::new().limit(10)).await? {
//!     println!("{:?} <- {:?}", tuple.config.checkpoint_id, tuple.parent_config);
//! }
//! # Ok(()) }
//! ```
//!
//! ## Concepts
//! - **Tables.** `checkpoints` (one row per checkpoint: a JSON document with primitive channel
//!   values inline, and the metadata), `checkpoint_blobs` (other channel values, one row per
//!   channel *version*, written only when that version is new) and `checkpoint_writes` (pending
//!   writes of tasks, by `(task_id, idx)`). Namespaces are keyed by `checkpoint_ns_hash =
//!   UNHEX(MD5(checkpoint_ns))`, computed by the writer.
//! - **Schema.** [`MySqlCheckpointer::setup`] applies LangGraph's migrations v0..v21 and records them
//!   in `checkpoint_migrations`, so the Python `setup()` finds nothing to do, and the other way
//!   round. MySQL and MariaDB get the same final schema through LangGraph's executable-comment
//!   split. Call it once per database (at deploy time or start-up); it is safe to race.
//! - **Reads** are one statement per call: each checkpoint row comes with its blobs and writes
//!   aggregated into JSON arrays, as the Python saver queries them, except that the cost of
//!   reading a checkpoint does not grow with the length of its thread, and that it works whatever
//!   the database's collation (LangGraph's statement fails outside the server default). Values
//!   too large to come back inside the aggregates are fetched on their own, never dropped.
//! - **Exact ids.** The columns keep LangGraph's types, so they compare under the database's
//!   collation, usually blind to case, accents and trailing spaces; every statement also compares
//!   thread ids (and checkpoint ids, channels) byte for byte, so `user-1`, `User-1` and `user-1 `
//!   are three threads. The shallow saver, whose key is the thread id, refuses to store a thread
//!   next to one its collation confuses it with
//!   ([`CheckpointError::Invalid`](mnemograph_checkpoint::checkpoint::CheckpointError::Invalid)).
//! - **Writes.** `put` is one transaction (blobs in one multi-row `INSERT IGNORE`, then the
//!   checkpoint upsert), `put_writes` one multi-row statement; documents and metadata are written
//!   as Python's `json.dumps` writes them, so metadata filters match rows of either
//!   implementation on MariaDB too.
//! - **Delta mode** (opt-in, Rust-only). [`MySqlCheckpointer::with_delta_channels`] stores a list
//!   channel such as `messages` as the items appended since the previous version (type
//!   `delta-msgpack`) plus a full snapshot every 32 versions, instead of the whole list at every
//!   version, so a long chat thread stores a small fraction of plain mode's bytes
//!   (`docs/benchmarks/mysql.md` has the figures). Reads return the same values as plain mode;
//!   LangGraph's Python savers refuse delta rows (see [`DeltaChannels`]).
//! - **Retention.** [`MySqlCheckpointer::prune`] keeps the newest checkpoints of a thread and drops
//!   the writes and blobs only older ones used; [`MySqlShallowCheckpointer`] keeps only the latest
//!   checkpoint in the first place (LangGraph's shallow tables; a database of its own).
//! - **LangGraph's extended capabilities.**
//!   [`delete_for_runs`](mnemograph_checkpoint::checkpoint::Checkpointer::delete_for_runs),
//!   [`copy_thread`](mnemograph_checkpoint::checkpoint::Checkpointer::copy_thread) (rows copied by the
//!   server, ids kept; a target with checkpoints is refused) and
//!   [`prune`](mnemograph_checkpoint::checkpoint::Checkpointer::prune) (`KeepLatest` or `Delete`), each
//!   one transaction, on both savers and in delta mode, where the blobs a remaining checkpoint's
//!   delta chain needs stay. `delete_for_runs` reads every row's metadata: a job's call.
//! - **Limits.** Thread ids, checkpoint ids, task ids, channel names and versions are
//!   `VARCHAR(150)`, namespaces and task paths `VARCHAR(2000)`: longer values are refused with
//!   [`CheckpointError::Invalid`](mnemograph_checkpoint::checkpoint::CheckpointError::Invalid) rather than
//!   truncated. Each value (a blob or a pending write, with its row) must fit in the server's
//!   `max_allowed_packet`.
//! - **Character set.** Create the database as `utf8mb4` so any text round-trips; the connection
//!   always uses `utf8mb4`.
//! - **Errors** are [`Error`]; through the trait they arrive as
//!   [`CheckpointError::Backend`](mnemograph_checkpoint::checkpoint::CheckpointError::Backend), recoverable by
//!   downcast.
//!
//! ## Features
//! | feature | default | what |
//! |---|---|---|
//! | `tls-rustls` | yes | TLS via rustls (`ssl-mode=required` etc. in the URL) |
//! | `tls-native-tls` | no | TLS via the platform library instead |
//!
//! ## Requirements
//! MySQL 8.0.19+ (row aliases in upserts) or MariaDB 10.7+ (`JSON_TABLE`, `VALUE()`).

mod checkpointer;
mod commit;
mod copy;
mod delta;
mod error;
mod exact;
mod fence;
mod keys;
mod lock_error;
mod migrate;
mod oversized;
mod params;
mod pyjson;
mod read_cache;
mod read_io;
mod reads;
mod retention;
mod rows;
mod runs;
mod script;
mod shallow;
mod sql;
mod statement;
mod stored;
mod texts;
mod uncached;
mod url_options;

pub use checkpointer::MySqlCheckpointer;
pub use delta::DeltaChannels;
pub use error::{Error, Result};
pub use fence::Fence;
pub use lock_error::LockError;
pub use shallow::MySqlShallowCheckpointer;

/// Re-exported so callers can build [`MySqlCheckpointer::connect_with`]'s options without naming
/// sqlx in their own manifest.
pub use sqlx::mysql::{MySqlConnectOptions, MySqlPool, MySqlPoolOptions, MySqlSslMode};
