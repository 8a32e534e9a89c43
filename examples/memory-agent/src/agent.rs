//! The compiled graph and [`Agent`], which runs one turn of a user's session on it.

use std::sync::Arc;

use mnemograph_core::checkpoint::serde::{checkpoint_to_json, dumps_typed};
use mnemograph_core::checkpoint::{CheckpointConfig, DynCheckpointer};
use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::prelude::*;
use mnemograph_core::store::DynEmbeddings;
use mnemograph_core::GraphStream;
use mnemograph_memory::MemoryHit;

use crate::answers::Answers;
use crate::compact::{compact_users, CompactPolicy, SessionCompaction};
use crate::config::{Config, ModelChoice};
use crate::consolidate::AgentConsolidator;
use crate::error::{Error, Result};
use crate::importance::ImportanceScorer;
use crate::nodes::{call_model, retrieve, save_memory, AgentContext};
use crate::passages::Passages;
use crate::recent_queries::RecentQueries;
use crate::settings::Settings;
use crate::state::{last_text, thread_id, AgentState, AgentStateUpdate};
use crate::subjects::Subjects;
use crate::summarizer::AgentSummarizer;
use crate::when::TimeWindow;

/// The agent's graph, without checkpointer or context: `START → retrieve → call_model →
/// save_memory → END`. [`Agent`] adds both; [`draw_mermaid`](CompiledGraph::draw_mermaid) on it
/// gives the README's diagram.
///
/// # Errors
/// [`Error::Graph`] if the graph does not validate (it always does; the check is mnemograph-core's).
pub fn build_graph() -> Result<CompiledGraph<AgentState, AgentContext>> {
    Ok(StateGraph::<AgentState, AgentContext>::new()
        .add_node("retrieve", retrieve)
        .add_node("call_model", call_model)
        .add_node("save_memory", save_memory)
        .add_edge(START, "retrieve")
        .add_edge("retrieve", "call_model")
        .add_edge("call_model", "save_memory")
        .add_edge("save_memory", END)
        .compile()?)
}

/// One question and answer, with what long-term memory contributed.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The user.
    pub user_id: String,
    /// The session.
    pub session_id: String,
    /// What the user said.
    pub question: String,
    /// Memories recalled for it, best first.
    pub recalled: Vec<MemoryHit>,
    /// The model's reply.
    pub answer: String,
    /// Messages in the thread after the turn (short-term memory).
    pub thread_messages: usize,
    /// Why each older memory this turn superseded was retired (see [`AgentState::retired`]).
    pub retired: Vec<String>,
    /// The time window the question named, which recall was narrowed to (see
    /// [`AgentState::recall_window`]).
    pub recall_window: Option<TimeWindow>,
    /// Whether that window held nothing, so recall searched all time instead.
    pub window_fallback: bool,
}

/// The size of a thread's latest checkpoint as the SQL savers store it: the JSON document plus
/// the msgpack blobs of its channel values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckpointSize {
    /// The checkpoint's id.
    pub checkpoint_id: String,
    /// Its superstep.
    pub step: i64,
    /// Bytes of the JSON document (versions, inline scalar values).
    pub document_bytes: usize,
    /// Bytes of the serialized channel values (the messages dominate).
    pub blob_bytes: usize,
}

impl CheckpointSize {
    /// Document and blobs together.
    pub fn bytes(&self) -> usize {
        self.document_bytes + self.blob_bytes
    }
}

/// The memory agent: the graph, its checkpointer (short-term memory) and its context (long-term
/// memory and model).
#[derive(Clone)]
pub struct Agent {
    /// The graph with checkpointer and context attached.
    graph: CompiledGraph<AgentState, AgentContext>,
    /// Kept to measure checkpoints; the graph holds the same saver.
    checkpointer: Arc<dyn DynCheckpointer>,
    /// A copy of the graph's context, for callers (e.g. to drop a Milvus collection).
    context: AgentContext,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The saver is a trait object without `Debug`.
        f.debug_struct("Agent")
            .field("graph", &self.graph)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent over `context` that checkpoints to `checkpointer`.
    ///
    /// # Errors
    /// As [`build_graph`].
    pub fn new(context: AgentContext, checkpointer: Arc<dyn DynCheckpointer>) -> Result<Self> {
        let graph =
            build_graph()?.with_shared_checkpointer(Arc::clone(&checkpointer)).with_context(context.clone());
        Ok(Self { graph, checkpointer, context })
    }

    /// Connects the backends `config` names and builds the agent with the default
    /// [`Settings`].
    ///
    /// # Errors
    /// As [`Config::chat_model`], [`Config::connect_memory`] and [`Config::connect_checkpointer`].
    pub async fn connect(config: &Config) -> Result<Self> {
        Self::connect_with(config, &Settings::default()).await
    }

    /// Connects the backends `config` names and builds the agent tuned by `settings`.
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_with(config: &Config, settings: &Settings) -> Result<Self> {
        let model = config.chat_model()?;
        // The checkpointer first: if its server is missing, no Milvus collection has been
        // created for nothing (connecting creates it).
        let checkpointer = config.connect_checkpointer().await?;
        // The question is embedded by the search and again by `Answers`: once is enough.
        let embedder: Arc<dyn DynEmbeddings> = Arc::new(RecentQueries::new(config.embedder.load()?));
        let memory = config.connect_memory_with(Arc::clone(&embedder)).await?;
        // The answers and the update path share the sentence vectors a statement's save embeds.
        let passages = Passages::new(Arc::clone(&embedder));
        let subjects = config.embedder.subjects().then(|| Subjects::new(Arc::clone(&embedder)));
        let answers = config
            .embedder
            .answer_share()
            .map(|share| Answers::new(passages.clone(), share).with_subjects(subjects.clone()));
        // The update path follows the model: an LLM judges supersession when there is one,
        // the offline rule otherwise; the rule retires only statements on the new one's subject.
        let on = subjects.map(|s| (passages, s));
        let consolidator = match config.model {
            ModelChoice::Offline => AgentConsolidator::rule_on(config.embedder.rule_similarity(), on),
            _ => AgentConsolidator::llm_on(model.clone(), config.embedder.rule_similarity(), on),
        };
        // Scoring importance and summarizing follow the model too.
        let (importance, summarizer) = match config.model {
            ModelChoice::Offline => (ImportanceScorer::Rule, AgentSummarizer::Extractive),
            _ => (ImportanceScorer::Llm(model.clone()), AgentSummarizer::Llm(model.clone())),
        };
        let context = AgentContext::new(memory, model)
            .with_consolidator(consolidator)
            .with_importance(importance)
            .with_summarizer(summarizer)
            .with_max_context_tokens(settings.max_context_tokens)
            .with_answers(answers);
        Self::new(context, checkpointer)
    }

    /// The compiled graph.
    pub fn graph(&self) -> &CompiledGraph<AgentState, AgentContext> {
        &self.graph
    }

    /// The nodes' context (memory and model).
    pub fn context(&self) -> &AgentContext {
        &self.context
    }

    /// The run config of a user's session: its thread is `"{user_id}:{session_id}"`.
    pub fn run_config(user_id: &str, session_id: &str) -> RunConfig {
        RunConfig::thread(thread_id(user_id, session_id))
    }

    /// The graph input for one message: the human message plus the ids the nodes need.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty id, a control character, a user id with `:` (it would make
    /// two users' thread ids collide) or an id over 256 bytes; or empty text.
    pub fn input(user_id: &str, session_id: &str, text: &str) -> Result<AgentStateUpdate> {
        check_id("user id", user_id)?;
        check_id("session id", session_id)?;
        if user_id.contains(':') {
            return Err(Error::Invalid { what: "user id", reason: "must not contain `:`".to_owned() });
        }
        if text.trim().is_empty() {
            return Err(Error::Invalid { what: "message", reason: "must not be empty".to_owned() });
        }
        Ok(AgentStateUpdate::messages(vec![Message::human(text.to_owned())])
            .with_user_id(user_id)
            .with_session_id(session_id))
    }

    /// Runs one turn: recall, answer, remember.
    ///
    /// # Errors
    /// [`Error::Invalid`] for bad input (see [`input`](Self::input)); [`Error::Graph`] when a node
    /// or the checkpointer fails.
    pub async fn chat(&self, user_id: &str, session_id: &str, text: &str) -> Result<Turn> {
        let input = Self::input(user_id, session_id, text)?;
        let state = self.graph.invoke(input, &Self::run_config(user_id, session_id)).await?.into_state();
        Ok(Turn {
            user_id: user_id.to_owned(),
            session_id: session_id.to_owned(),
            question: text.to_owned(),
            answer: last_text(&state.messages, MessageType::Ai).unwrap_or_default(),
            recalled: state.retrieved_history,
            thread_messages: state.messages.len(),
            retired: state.retired,
            recall_window: state.recall_window,
            window_fallback: state.window_fallback,
        })
    }

    /// Runs one turn as a stream of node updates and model tokens (for the interactive mode).
    ///
    /// # Errors
    /// [`Error::Invalid`] for bad input; run failures arrive as the stream's last item.
    pub fn chat_stream(
        &self,
        user_id: &str,
        session_id: &str,
        text: &str,
    ) -> Result<GraphStream<AgentState>> {
        let input = Self::input(user_id, session_id, text)?;
        Ok(self
            .graph
            .stream(Some(input), &Self::run_config(user_id, session_id))
            .modes([StreamMode::Updates, StreamMode::Messages]))
    }

    /// The size of the latest checkpoint of a user's session, or `None` before its first turn.
    ///
    /// # Errors
    /// [`Error::Checkpoint`] when the saver fails, [`Error::Serde`] when a value cannot be
    /// serialized.
    pub async fn checkpoint_size(&self, user_id: &str, session_id: &str) -> Result<Option<CheckpointSize>> {
        let config = CheckpointConfig::thread(thread_id(user_id, session_id));
        let Some(tuple) = self.checkpointer.get_tuple(&config).await? else { return Ok(None) };
        let (document, blobs) = checkpoint_to_json(&tuple.checkpoint)?;
        let mut blob_bytes = 0;
        for (_channel, _version, value) in &blobs {
            blob_bytes += dumps_typed(value)?.1.len();
        }
        Ok(Some(CheckpointSize {
            checkpoint_id: tuple.checkpoint.id,
            step: tuple.metadata.step,
            document_bytes: document.into_value().to_string().len(),
            blob_bytes,
        }))
    }

    /// Compacts the sessions of `users` that `policy` picks: see [`compact_users`].
    ///
    /// # Errors
    /// As [`compact_users`].
    pub async fn compact(&self, users: &[String], policy: &CompactPolicy) -> Result<Vec<SessionCompaction>> {
        compact_users(&self.context, users, policy).await
    }

    /// Deletes a session's thread (short-term memory); long-term memories stay.
    ///
    /// # Errors
    /// [`Error::Checkpoint`] when the saver fails.
    pub async fn forget_thread(&self, user_id: &str, session_id: &str) -> Result<()> {
        Ok(self.checkpointer.delete_thread(&thread_id(user_id, session_id)).await?)
    }
}

fn check_id(what: &'static str, id: &str) -> Result<()> {
    let reason = if id.is_empty() {
        "must not be empty"
    } else if id.chars().any(char::is_control) {
        "must not contain control characters"
    } else if id.len() > 256 {
        "must be at most 256 bytes"
    } else {
        return Ok(());
    };
    Err(Error::Invalid { what, reason: reason.to_owned() })
}
