//! # mnemograph-memory-milvus
//!
//! The Milvus driver of mnemograph's long-term memory: [`MilvusMemory`] is the
//! [`Memory`](mnemograph_memory::Memory) API of mnemograph-memory over a Milvus collection (fields
//! in [`fields`]), with dense and BM25 hybrid search, time decay, importance and per-user
//! isolation, shared across processes; [`MilvusStore`] is mnemograph-checkpoint's
//! [`Store`](mnemograph_checkpoint::store::Store) (LangGraph's `BaseStore`) on Milvus, for
//! `CompiledGraph::with_store`. The policy (ranking, consolidation, compaction, retirement) lives in
//! mnemograph-memory and is the same for every backend.
//!
//! ```no_run
//! use mnemograph_checkpoint::store::HashingEmbeddings;
//! use mnemograph_memory::{Memory, NewMemory, RetrieveQuery};
//! use mnemograph_memory_milvus::{MilvusConfig, MilvusMemory};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A real model in production (mnemograph-memory's `local-embeddings`, or an embeddings API).
//! let config = MilvusConfig::new("http://127.0.0.1:19530").collection("memories");
//! let memory = MilvusMemory::connect(config, HashingEmbeddings::new(384)).await?;
//! memory.save_turn(NewMemory::turn("alice", "monday", "We set the RAG chunk size to 512", "Noted")).await?;
//! let hits = memory.retrieve(RetrieveQuery::new("alice", "which chunk size did we pick?")).await?;
//! assert!(hits.iter().all(|h| h.record.user_id == "alice"));
//! # Ok(()) }
//! ```
//!
//! ## Concepts
//! - **Isolation** is a security property: every request to Milvus is scoped with a
//!   `user_id == "…"` clause produced by [`Filter`], which escapes values instead of pasting them.
//! - **Ranking**: candidates (4×top-k, at least 20) come from dense search of the question, of the
//!   query enriched with recent messages when there are some, and in hybrid mode BM25 on
//!   `content`, fused by weighted RRF favouring the question's own list; then mnemograph-memory's
//!   reranking blends in time decay and importance. [`HybridFusion`] chooses who fuses: the client
//!   (one search per list, concurrently; the default, which ranks best), or Milvus in one
//!   `HybridSearch` round trip with its weighted or RRF ranker, falling back to the client on a
//!   server without `HybridSearch`.
//! - **Chinese and English**: [`Analyzer::Auto`] gives `content` Milvus's Chinese analyzer where
//!   the server has it, and the `standard` one otherwise.
//! - **Retirement** needs partial upsert (Milvus 2.6.2+ or Milvus Lite 3); an older server gets a
//!   typed `Unsupported` error and nothing written. It writes the `superseded_*` marks into
//!   `metadata` and sets the BOOL [`fields::RETIRED`], on which the default scope filters; a
//!   collection created before that field existed keeps working on the marks alone (see
//!   [`MilvusMemory::retired_field`]).
//!
//! ## Running Milvus here
//! `scripts/milvus-lite.sh` installs Milvus Lite 3.2.2 in a venv and starts it on loopback; the
//! live tests read `MILVUS_URL`. `scripts/milvus-lite.sh minilm` fetches all-MiniLM-L6-v2.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod collection;
mod error;
mod filter;
mod memory;
mod schema;
mod store;

pub use error::{Error, Result};
pub use filter::{quote, Filter};
pub use memory::MilvusMemory;
pub use schema::{fields, Analyzer, Consistency, HybridFusion, Metric, MilvusConfig};
pub use store::{MilvusStore, MilvusStoreConfig};
