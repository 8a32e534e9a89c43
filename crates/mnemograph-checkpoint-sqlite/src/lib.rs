//! # mnemograph-checkpoint-sqlite
//!
//! A SQLite [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) storing checkpoints
//! in the tables and bytes of LangGraph's Python SQLite saver (`langgraph-checkpoint-sqlite`), so
//! a thread written by one language is continued by the other, interrupted threads included; and
//! [`SqliteStore`], a long-term memory [`Store`](mnemograph_checkpoint::store::Store) in the tables
//! of LangGraph's Python `SqliteStore`.
//!
//! ```
//! use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version, now_iso};
//! use mnemograph_checkpoint::checkpoint::{
//!     Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer, ListOptions,
//! };
//! use mnemograph_checkpoint::value::ChannelValue;
//! use mnemograph_checkpoint_sqlite::SqliteCheckpointer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A file path, a `sqlite://` URL, or `:memory:`; the tables are created when missing.
//! let saver = SqliteCheckpointer::connect(":memory:").await?;
//!
//! // Usually the graph does the saving: `StateGraph::compile_with(saver)`. By hand:
//! let mut checkpoint = Checkpoint { v: 4, id: checkpoint_id(0), ts: now_iso(), ..Checkpoint::default() };
//! checkpoint.channel_values.insert("log".into(), ChannelValue::new(vec!["hello"]));
//! checkpoint.channel_versions.insert("log".into(), next_version(None).into());
//! let new_versions = checkpoint.channel_versions.clone();
//! let thread = CheckpointConfig::thread("user-42");
//! let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
//! saver.put(&thread, checkpoint, metadata, new_versions).await?;
//!
//! let latest = saver.get_tuple(&thread).await?.expect("just saved");
//! assert_eq!(latest.checkpoint.channel_values["log"].decode::<Vec<String>>()?, ["hello"]);
//! assert_eq!(saver.list(Some(&thread), ListOptions::new()).await?.len(), 1);
//! # Ok(()) }
//! ```
//!
//! ## Concepts
//! - **Tables.** `checkpoints` (one row per checkpoint: the whole checkpoint, channel values
//!   inside, as one msgpack document of type `msgpack`, and the metadata as the JSON text Python's
//!   `json.dumps(..., ensure_ascii=False)` writes) and `writes` (pending writes by
//!   `(task_id, idx)`, each value as LangGraph's `(type, bytes)`). [`SqliteCheckpointer::setup`]
//!   runs LangGraph's own `CREATE TABLE IF NOT EXISTS` statements.
//! - **Concurrency.** The database is in WAL mode: readers never wait for the writer. Every write
//!   is one `BEGIN IMMEDIATE` transaction, which takes the file's write lock before it reads what
//!   it checks, so [`commit`](mnemograph_checkpoint::checkpoint::Checkpointer::commit) expecting the
//!   latest parent is atomic across connections and processes. A writer waits for another at most
//!   the busy timeout ([`DEFAULT_BUSY_TIMEOUT`], or your own on [`connect_options`]), then fails
//!   with [`Error::Busy`], having changed nothing.
//! - **Durability.** `synchronous = FULL`: a checkpoint whose `put` returned is in the file, and a
//!   writer killed at any moment leaves a database that opens with every acknowledged checkpoint.
//! - **Bad rows.** A row that does not decode is
//!   [`CheckpointError::Corrupt`](mnemograph_checkpoint::checkpoint::CheckpointError::Corrupt),
//!   naming the thread and checkpoint; other threads read and write as before.
//! - **Inspection.** [`SqliteCheckpointer`] implements
//!   [`StoredView`](mnemograph_checkpoint::checkpoint::stored::StoredView), which
//!   `checkpoint-inspect` reads (`sqlite://PATH`): each checkpoint's document with its channel
//!   values shown one by one, so a value the saver refuses is shown next to the rest.
//! - **The store** keeps items in `store` and their vectors in `store_vectors`, migrated as
//!   LangGraph numbers its migrations; one file can hold checkpoints and store side by side.
//! - **Errors** are [`Error`]; through the trait they arrive as
//!   [`CheckpointError::Backend`](mnemograph_checkpoint::checkpoint::CheckpointError::Backend),
//!   recoverable by downcast ([`Error::is_busy`]).

mod carry;
mod checkpointer;
mod copy;
mod error;
mod filter;
mod metadata_text;
mod open;
mod options;
mod reads;
mod remove;
mod rows;
mod schema;
mod store;
mod stored;
mod write;

pub use checkpointer::SqliteCheckpointer;
pub use error::{Error, Result};
pub use options::{connect_options, DEFAULT_BUSY_TIMEOUT};
pub use store::{SqliteStore, SqliteStoreBuilder};

/// Re-exported so callers can build [`SqliteCheckpointer::connect_with`]'s options without naming
/// sqlx in their own manifest.
pub use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
