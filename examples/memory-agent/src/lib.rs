//! # memory-agent
//!
//! An agent that remembers across sessions: a graph `retrieve → call_model → save_memory` with
//! two layers of memory.
//!
//! - **Short-term**: the conversation of one session, the `messages` of [`AgentState`],
//!   checkpointed per thread `"{user_id}:{session_id}"` (SQLite, in memory, Postgres, MySQL or Redis).
//! - **Long-term**: one memory per question-and-answer exchange, written by `save_memory` through
//!   mnemograph-memory's [`Memory`](mnemograph_memory::Memory) API and recalled by `retrieve` for later
//!   sessions, scoped to the user (embedded, or Milvus). A statement that changes an older fact
//!   retires the older memory (mnemograph-memory's `Consolidator`), so it is no longer recalled.
//!   For a question about the user, the user's own statements come before remarks on things
//!   and news of other people ([`remarks_on_something`], [`about_someone_else`]), and among them
//!   the newest that answers the question comes first ([`Answers`]), however it was worded: the
//!   statements on the question's subject (where the user lives, their job, their car, …;
//!   [`Subjects`]) answer it.
//!   Recall also reaches the current session's exchanges that trimming dropped from the request
//!   ([`exchanges_in_reach`]), and a question that names a time ("yesterday", "上周") recalls
//!   from that window only ([`time_window`]).
//!
//! Three things keep both layers lean:
//!
//! - **Importance at write time**: `save_memory` stores each exchange with an importance in
//!   `[0, 1]` that the reranker weighs: the chat model's score when it is a real one, the offline
//!   [`importance`] rule otherwise or when scoring fails ([`ImportanceScorer`]).
//! - **Compaction**: [`compact_user`] replaces a user's ended or long sessions with summaries
//!   written by the chat model (offline: [`extractive_summary`]) and retires the exchanges each
//!   summary stands for, so recall returns the summary ([`CompactPolicy`], [`AgentSummarizer`];
//!   `memory-agent compact`, or `MEMORY_COMPACT_AFTER_DAYS` in the interactive mode).
//! - **Short-term trimming**: before every model call the thread is cut to a token budget
//!   ([`trim_conversation`], `MEMORY_MAX_CONTEXT_TOKENS`, default [`DEFAULT_MAX_CONTEXT_TOKENS`]),
//!   always keeping the latest question; the checkpoint keeps the whole thread.
//!
//! With no environment variables everything runs in process with a deterministic
//! [`OfflineModel`]; see [`Config`] for the variables that switch in real servers and a real model.
//!
//! ```
//! use memory_agent::{Agent, Config};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> memory_agent::Result<()> {
//! let agent = Agent::connect(&Config::embedded()).await?;
//! agent.chat("ada", "monday", "My dog is called Biscuit.").await?;
//! // A new session is a new thread: the fact comes back from long-term memory.
//! let turn = agent.chat("ada", "friday", "What is my dog called?").await?;
//! assert!(turn.answer.contains("Biscuit"));
//! assert_eq!(turn.recalled[0].record.session_id, "monday");
//! // Another user recalls nothing of Ada's.
//! assert!(agent.chat("bob", "monday", "What is my dog called?").await?.recalled.is_empty());
//! # Ok(()) }
//! ```
//!
//! ## Layout
//! | module | what |
//! |---|---|
//! | `state` | [`AgentState`] (`#[derive(State)]`), [`thread_id`] |
//! | `nodes` | the three nodes, the prompt, [`AgentContext`] |
//! | `agent` | [`build_graph`], [`Agent`] (one turn, checkpoint size) |
//! | `memory` | [`AgentMemory`]: embedded or Milvus behind one type |
//! | `consolidate` | the update path: [`AgentConsolidator`] (LLM or offline rule), [`Clock`] |
//! | `same_subject` | [`SameSubject`]: the rule retires only statements on the new one's subject |
//! | `importance` | [`ImportanceScorer`]: the model's 0-1 score or the offline rule |
//! | `answers` | [`Answers`]: the user's statements that answer a question, newest first |
//! | `subjects` | [`Subjects`]: which subject of a life a sentence or a question is on |
//! | `passages` | [`Passages`]: sentence vectors, cached; [`RecentQueries`]: a question embedded once |
//! | `trim` | [`trim_conversation`]: the thread cut to the token budget before each call |
//! | `when` | [`time_window`]: the time a question names ("yesterday", "上周"), recall's window |
//! | `summarizer` | [`AgentSummarizer`]: the model or the extractive offline summary |
//! | `compact` | [`compact_user`], [`CompactPolicy`]: which sessions become summaries |
//! | `settings` | [`Settings`]: `MEMORY_MAX_CONTEXT_TOKENS`, `MEMORY_COMPACT_AFTER_DAYS` |
//! | `offline` | [`OfflineModel`] |
//! | `config` | [`Config`] from the environment |
//! | `embedder` | [`EmbedderChoice`]: the multilingual model (default), an endpoint, or hashing |
//! | `features` | [`Feature`]: which clients this build compiles in |
//! | `clients` | the server and OpenAI clients, each behind its feature |
//! | `endpoint` | [`OpenAiEndpoint`]: model, key and base URL as the environment names them |
//! | `connect` | connecting to servers with clear errors |
//! | `demo` | the scripted conversation and the transcript format |
//!
//! ## Features
//! The default build compiles what the default run uses: the offline model, the multilingual
//! encoder and SQLite files. A setting that names a client this build lacks is
//! [`Error::NotBuilt`], naming the feature.
//!
//! | feature | what |
//! |---|---|
//! | `mysql`, `postgres`, `redis` | checkpoints on that server (`MYSQL_URL`, `DATABASE_URL`, `REDIS_URL`) |
//! | `milvus` | long-term memory in Milvus (`MILVUS_URL`) |
//! | `openai` | the OpenAI-compatible chat model and embeddings (`OPENAI_API_KEY`, `OPENAI_EMBEDDING_MODEL`) |
//! | `otlp` | spans and metrics exported over OTLP (`OTEL_EXPORTER_OTLP_ENDPOINT`) |
//! | `servers` | all of the above |

mod agent;
mod answers;
mod clients;
mod compact;
mod config;
// Reaching the servers the settings name; only builds with a server client have any.
#[cfg(any(feature = "mysql", feature = "postgres", feature = "redis", feature = "milvus"))]
mod connect;
mod consolidate;
mod demo;
mod embedder;
mod endpoint;
mod error;
mod features;
mod importance;
mod memory;
mod nodes;
mod offline;
mod passages;
mod question;
mod recent_queries;
mod relations;
mod same_subject;
mod settings;
mod state;
mod subjects;
mod summarizer;
#[cfg(test)]
mod test_env;
mod trim;
mod when;
mod whose;

pub use agent::{build_graph, Agent, CheckpointSize, Turn};
pub use answers::Answers;
pub use compact::{
    compact_user, compact_users, render_compaction, CompactPolicy, CompactReason, SessionCompaction,
};
pub use config::{
    default_data_dir, CheckpointerChoice, CheckpointerKind, Config, MemoryChoice, ModelChoice,
    CHECKPOINTS_FILE, CONNECT_TIMEOUT, DEFAULT_COLLECTION, DEFAULT_MODEL, DEFAULT_REDIS_PREFIX,
    MEMORIES_FILE,
};
pub use consolidate::{AgentConsolidator, Clock, FallbackDecider, FALLBACK_REASON, RULE_SIMILARITY};
pub use demo::{
    render_checkpoint, render_recalled, render_turn, render_window, run_demo, session_day, DemoReport,
    SessionReport, SCRIPT,
};
pub use demo::{AFTER_COMPACTION, DEMO_COMPACT_AFTER_DAYS};
pub use embedder::{
    EmbedderChoice, DEFAULT_OPENAI_DIMS, HASHING_DIMS, MULTILINGUAL_ANSWER_SHARE, MULTILINGUAL_NEWER_FIRST,
    MULTILINGUAL_RULE_SIMILARITY,
};
pub use endpoint::OpenAiEndpoint;
pub use error::{redact, Error, Result};
pub use features::Feature;
pub use importance::{
    importance, parse_importance, score_with, ImportanceScorer, IMPORTANCE_PROMPT, MIN_RECALL_IMPORTANCE,
    QUESTION_IMPORTANCE, STATEMENT_IMPORTANCE,
};
pub use memory::AgentMemory;
pub use nodes::{
    build_request, call_model, exchanges_in_reach, retrieve, save_memory, system_prompt, AgentContext,
};
pub use offline::{OfflineModel, OFFLINE_NOTICE};
pub use passages::{sentences, Passages};
pub use question::{is_question, is_request};
pub use recent_queries::RecentQueries;
pub use same_subject::SameSubject;
pub use settings::Settings;
pub use state::{last_human, last_text, thread_id, AgentState, AgentStateUpdate};
pub use subjects::{
    Placement, Subject, Subjects, QUESTION_MARGIN, QUESTION_SUBJECTS, SUBJECTS, SUBJECT_MARGIN,
};
pub use summarizer::{extractive_summary, AgentSummarizer};
pub use trim::{request_tokens, trim_conversation, DEFAULT_MAX_CONTEXT_TOKENS};
pub use when::{time_window, TimeWindow};
pub use whose::{about_someone_else, asks_about_the_user, remarks_on_something};
