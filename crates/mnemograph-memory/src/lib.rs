//! # mnemograph-memory
//!
//! Long-term, cross-session memory for mnemograph-core agents: the checkpointer keeps *this*
//! conversation, this crate lets an agent recall what a user said *last week*. Its design: one
//! memory per question-and-answer exchange, written on the hot path; retrieval by the question and
//! by the query enriched with recent context, each searched densely and fused with a BM25 keyword
//! search by weighted RRF, then time decay and importance; and a background job that compacts long
//! sessions into summaries.
//!
//! This crate is the policy: the [`Memory`] API, ranking, consolidation, compaction, retirement and
//! [`EmbeddedMemory`], a backend on a mnemograph-core [`Store`](mnemograph_checkpoint::store::Store) in
//! process, no server. The Milvus backend, `MilvusMemory`, is the driver crate
//! mnemograph-memory-milvus; an agent written against [`Memory`] runs on either, and production
//! switches by constructor.
//!
//! ```
//! use mnemograph_checkpoint::store::HashingEmbeddings;
//! use mnemograph_memory::{EmbeddedMemory, Memory, NewMemory, RetrieveQuery, SessionScope};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> mnemograph_memory::Result<()> {
//! // HashingEmbeddings keeps this example offline; use a real model (feature `multilingual`).
//! let memory = EmbeddedMemory::new(HashingEmbeddings::new(384));
//! memory.save_turn(NewMemory::turn("alice", "monday", "We set the RAG chunk size to 512", "Noted: 512 tokens")).await?;
//! memory.save_turn(NewMemory::turn("alice", "monday", "I like hiking", "Nice!")).await?;
//! memory.save_turn(NewMemory::turn("bob", "monday", "My RAG chunk size is 256", "OK")).await?;
//!
//! let hits = memory
//!     .retrieve(RetrieveQuery::new("alice", "what chunk size did we pick for RAG?").session(SessionScope::Exclude("friday".into())))
//!     .await?;
//! assert!(hits[0].record.content.contains("512"));
//! assert!(hits.iter().all(|h| h.record.user_id == "alice"));
//! # Ok(()) }
//! ```
//!
//! ## Concepts
//! - **Isolation** is a security property: every [`Memory`] call is scoped to one user, and
//!   retrieval drops another user's candidate even if a backend returned one.
//! - **Ranking**: candidates (4×top-k, at least 20) come from dense search, or from dense and BM25
//!   keyword search fused by weighted RRF; [`RerankConfig`] then blends in time decay (half-life)
//!   and importance. Opt in to [`RerankConfig::newer_first`] and [`NewerFirst`] then moves a newer
//!   memory directly above an older one it restates (similar once what every candidate shares is
//!   taken out), so a fact changed in other words or another language answers with its latest
//!   version ([`newer_first`]).
//! - **Compaction**: [`compact_session`] replaces old exchanges with summaries from a
//!   [`Summarizer`] you provide ([`LlmSummarizer`] over any chat model), so this crate needs no
//!   model crate; [`compact_and_retire`] retires them in favour of their summary instead of
//!   deleting them, and [`Sessions`] lists a user's sessions to pick those to compact.
//! - **Superseded facts**: when a fact changes ("we moved to Lisbon"), decay alone often leaves
//!   the old version first, since its wording may match the question better. A [`Consolidator`]
//!   finds the same user's most similar older memories, lets a [`SupersedeDecider`] pick those the
//!   new one replaces (an [`LlmDecider`] over your chat model, or the offline [`RuleDecider`]) and
//!   retires them ([`Retire`]): marked with `superseded_by` / `superseded_at` / `superseded_reason`
//!   in metadata, left out of retrieval, restorable. Opt in on the hot path with
//!   [`Consolidator::save_turn`], in the background with [`Consolidator::consolidate_session`] or
//!   [`compact_and_consolidate`].
//! - **A backend chosen at run time**: [`SharedMemory`] holds any backend with [`Memory`],
//!   [`Retire`] and [`Sessions`] behind one cheap-to-clone type, through their object-safe form
//!   [`DynMemory`].
//! - **Writing a backend**: implement [`Memory`] (and [`Retire`], [`Sessions`]); [`backend`] has
//!   the ranking and locking steps the two backends share.
//!
//! ## Features
//! | feature | default | what |
//! |---|---|---|
//! | `multilingual` | no | `MultilingualUseEmbeddings`, offline and in pure Rust on candle's tensors: the Universal Sentence Encoder multilingual v3, Chinese and English in one space |
//! | `minilm` | no | `MiniLmEmbeddings`, offline and in pure Rust (candle's BERT, `tokenizers`): all-MiniLM-L6-v2, English; it adds candle's model zoo and a tokenizer library to the build |
//! | `local-embeddings` | no | both models |
//!
//! Without features the crate builds no model runtime. The features are off by default, as a default
//! feature cannot be turned off by the application when a library in between depends on this crate.

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod backend;
#[cfg(test)]
#[path = "../tests/support/bilingual.rs"]
#[allow(unreachable_pub)]
mod bilingual;
mod bm25;
mod consolidate;
mod decide;
mod embedded;
mod error;
mod llm_decider;
mod llm_summarizer;
#[cfg(feature = "minilm")]
mod local;
mod memory;
#[cfg(feature = "multilingual")]
mod multilingual;
pub mod newer_first;
mod record;
mod rerank;
mod retire;
mod sessions;
mod shared;
mod spans;
mod summarize;

pub use consolidate::{ConsolidateOptions, ConsolidateReport, Consolidator};
pub use decide::{Candidate, RuleDecider, SupersedeDecider, Supersession};
pub use embedded::EmbeddedMemory;
pub use error::{Error, Result};
pub use llm_decider::{parse_decision, LlmDecider, SUPERSEDE_PROMPT};
pub use llm_summarizer::{LlmSummarizer, SUMMARY_PROMPT};
#[cfg(feature = "minilm")]
#[cfg_attr(docsrs, doc(cfg(feature = "minilm")))]
pub use local::MiniLmEmbeddings;
pub use memory::Memory;
#[cfg(feature = "multilingual")]
#[cfg_attr(docsrs, doc(cfg(feature = "multilingual")))]
pub use multilingual::MultilingualUseEmbeddings;
pub use newer_first::NewerFirst;
pub use record::{
    enriched_query, now_secs, MemoryHit, MemoryRecord, NewMemory, RetrieveQuery, SearchMode, SessionScope,
    ENRICH_RECENT, ROLE_EXCHANGE, ROLE_SUMMARY,
};
pub use rerank::{rrf, weighted_rrf, RerankConfig, CONTEXT_WEIGHT, KEYWORD_WEIGHT, RRF_K};
pub use retire::{Retire, Retirement, SUPERSEDED_AT, SUPERSEDED_BY, SUPERSEDED_REASON};
pub use sessions::{SessionInfo, Sessions};
pub use shared::{DynMemory, SharedMemory};
pub use summarize::{
    compact_and_consolidate, compact_session, summarizer_fn, CompactOptions, CompactReport, FnSummarizer,
    Summarizer,
};
pub use summarize::{compact_and_retire, COMPACTED_REASON};
