//! # mnemograph-checkpoint-postgres
//!
//! A PostgreSQL [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) storing
//! checkpoints in the tables and row format of LangGraph's Python Postgres saver
//! (`langgraph-checkpoint-postgres`), so Python and Rust services can share one database and
//! continue each other's threads, interrupted ones included.
//!
//! ```no_run
//! use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version};
//! use mnemograph_checkpoint::checkpoint::{
//!     Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer, ListOptions,
//! };
//! use mnemograph_checkpoint::value::ChannelValue;
//! use mnemograph_checkpoint_postgres::PostgresCheckpointer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // Needs a running server, e.g. PostgreSQL on 127.0.0.1:5432 with an `app` database.
//! let saver = PostgresCheckpointer::connect("postgres://postgres@127.0.0.1:5432/app").await?;
//! saver.setup().await?; // creates or upgrades the tables; a no-op when current
//!
//! // Usually the graph does the saving: `StateGraph::compile_with(saver)`. By hand:
//! let mut checkpoint = Checkpoint { v: 4, id: checkpoint_id(0), ..Checkpoint::default() };
//! checkpoint.channel_values.insert("topic".into(), ChannelValue::new(vec!["postgres"]));
//! checkpoint.channel_versions.insert("topic".into(), next_version(None).into());
//! let new_versions = checkpoint.channel_versions.clone();
//! let thread = CheckpointConfig::thread("user-42");
//! let metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
//! saver.put(&thread, checkpoint, metadata, new_versions).await?;
//!
//! let latest = saver.get_tuple(&thread).await?.expect("just saved");
//! let topic: Vec<String> = latest.checkpoint.channel_values["topic"].decode()?;
//! assert_eq!(topic, ["postgres"]);
//! for tuple in saver.list(Some(&thread), ListOptions::new().limit(10)).await? {
//!     println!("{:?} <- {:?}", tuple.config.checkpoint_id, tuple.parent_config);
//! }
//! # Ok(()) }
//! ```
//!
//! ## Concepts
//! - **Tables.** `checkpoints` (one row per checkpoint: a JSONB document with the primitive
//!   channel values inline, and the metadata), `checkpoint_blobs` (other channel values, one row
//!   per channel *version*, written when that version is new) and `checkpoint_writes` (pending
//!   writes of tasks, by `(task_id, idx)`). Values are LangGraph's serializer's `(type, bytes)`.
//! - **Schema.** [`PostgresCheckpointer::setup`] applies LangGraph's migrations v0..v9 and records
//!   them in `checkpoint_migrations`, so Python's `setup()` finds nothing to do, and the other way
//!   round.
//! - **Reads** are one statement per call: each checkpoint row with its blobs and pending writes.
//! - **Writes.** `put` and `commit` are one transaction, each checkpoint with its blobs and the
//!   writes it carries one statement; a commit expecting the latest parent checks it under an
//!   advisory lock of its thread and namespace, so racing writers of one thread cannot fork it.
//!   `put_writes` is one statement.
//! - **LangGraph's extended capabilities.**
//!   [`delete_for_runs`](mnemograph_checkpoint::checkpoint::Checkpointer::delete_for_runs) (one
//!   statement; reads every row's metadata: a job's call),
//!   [`copy_thread`](mnemograph_checkpoint::checkpoint::Checkpointer::copy_thread) (rows copied by
//!   the server, ids kept; a target with checkpoints is refused) and
//!   [`prune`](mnemograph_checkpoint::checkpoint::Checkpointer::prune) (`KeepLatest` as
//!   LangGraph's saver prunes, or `Delete`), each one transaction.
//! - **U+0000.** Postgres text and JSONB cannot hold it (LangGraph's saver fails on it). Ids,
//!   channels and metadata holding it are stored escaped, behind the noncharacter U+FDD0, and
//!   read back as they were; a text channel value holding it is stored as a blob rather than
//!   inline. Every other text is stored verbatim.
//! - **Errors** are [`Error`]; through the trait they arrive as
//!   [`CheckpointError::Backend`](mnemograph_checkpoint::checkpoint::CheckpointError::Backend),
//!   recoverable by downcast. Stored rows that cannot be read give
//!   [`CheckpointError::Corrupt`](mnemograph_checkpoint::checkpoint::CheckpointError::Corrupt)
//!   naming the checkpoint.
//!
//! ## The store
//! [`PostgresStore`] is a long-term memory [`Store`](mnemograph_checkpoint::store::Store) in
//! LangGraph's Python `PostgresStore` table (`store`, migrations in `store_migrations`): JSONB
//! values, namespaces as labels joined by `.`, expiry in `expires_at` and `ttl_minutes`, so
//! either language reads, filters and expires the other's items. It shares the checkpointer's
//! pool ([`PostgresStoreBuilder::from_pool`]). With an index it embeds items on `put` into
//! LangGraph's `store_vectors` table and ranks searches by cosine similarity: in pgvector
//! columns, readable by Python's store, when the server offers the extension, and in `real[]`
//! columns otherwise ([`VectorStorage`]). A search refreshes the expiry of the items it returns,
//! as Python's does.
//!
//! ## Features
//! | feature | default | what |
//! |---|---|---|
//! | `tls-rustls` | yes | TLS via rustls (`sslmode=require` etc. in the URL) |
//! | `tls-native-tls` | no | TLS via the platform library instead |

mod checkpointer;
mod commit;
mod copy;
mod delete;
mod document;
mod error;
mod migrations;
mod read_cache;
mod reads;
mod retention;
mod runs;
mod select;
mod store;
mod stored;
mod text;
mod tuple;
mod uncached;
mod writes;

pub use checkpointer::PostgresCheckpointer;
pub use error::{Error, Result};
pub use store::{PostgresStore, PostgresStoreBuilder, VectorStorage};

/// Re-exported so callers can build [`PostgresCheckpointer::connect_with`]'s options without
/// naming sqlx in their own manifest.
pub use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgSslMode};
