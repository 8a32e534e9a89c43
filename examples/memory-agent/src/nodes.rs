//! The three nodes of the agent's graph (retrieve → call_model → save_memory) and the prompt that
//! injects recalled memories.

use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::Runtime;
use mnemograph_memory::{Memory, MemoryHit, NewMemory, RetrieveQuery, SessionScope, ENRICH_RECENT};
use mnemograph_models::{ChatModelExt, ChatRequest, SharedChatModel};

use crate::consolidate::{AgentConsolidator, Clock};
use crate::importance::{ImportanceScorer, MIN_RECALL_IMPORTANCE};
use crate::memory::AgentMemory;
use crate::question::is_question;
use crate::state::{last_human, last_text, AgentState, AgentStateUpdate};
use crate::summarizer::AgentSummarizer;
use crate::trim::{trim_conversation, DEFAULT_MAX_CONTEXT_TOKENS};

/// What the nodes use besides the state: given once with `CompiledGraph::with_context`.
#[derive(Debug, Clone)]
pub struct AgentContext {
    /// Long-term memory (embedded or Milvus).
    pub memory: AgentMemory,
    /// The chat model (offline or OpenAI-compatible).
    pub model: SharedChatModel,
    /// How many memories to recall per question (default 3: enough for a fact and its context,
    /// few enough to keep the prompt short).
    pub top_k: usize,
    /// Retires what a new statement supersedes (the update path).
    pub consolidator: AgentConsolidator,
    /// The time memories are saved and ranked at.
    pub clock: Clock,
    /// Scores each exchange's importance as it is saved.
    pub importance: ImportanceScorer,
    /// Token budget of each model request (system prompt and trimmed conversation).
    pub max_context_tokens: usize,
    /// Writes the summaries that replace compacted sessions.
    pub summarizer: AgentSummarizer,
}

impl AgentContext {
    /// A context recalling 3 memories per question, consolidating, scoring importance
    /// and summarizing with the offline rules, trimming requests to
    /// [`DEFAULT_MAX_CONTEXT_TOKENS`], on the system clock.
    pub fn new(memory: impl Into<AgentMemory>, model: SharedChatModel) -> Self {
        Self {
            memory: memory.into(),
            model,
            top_k: 3,
            consolidator: AgentConsolidator::rule(),
            clock: Clock::default(),
            importance: ImportanceScorer::Rule,
            max_context_tokens: DEFAULT_MAX_CONTEXT_TOKENS,
            summarizer: AgentSummarizer::Extractive,
        }
    }

    /// Sets the importance scorer.
    #[must_use]
    pub fn with_importance(mut self, importance: ImportanceScorer) -> Self {
        self.importance = importance;
        self
    }

    /// Sets the token budget of each model request.
    #[must_use]
    pub fn with_max_context_tokens(mut self, tokens: usize) -> Self {
        self.max_context_tokens = tokens;
        self
    }

    /// Sets the summarizer of compaction.
    #[must_use]
    pub fn with_summarizer(mut self, summarizer: AgentSummarizer) -> Self {
        self.summarizer = summarizer;
        self
    }

    /// Sets the consolidator.
    #[must_use]
    pub fn with_consolidator(mut self, consolidator: AgentConsolidator) -> Self {
        self.consolidator = consolidator;
        self
    }
}

/// Header line of each memory in the system prompt; the offline model reads it back.
pub(crate) const MEMORY_HEADER: &str = "[memory ";

/// `retrieve`: recalls the user's long-term memories relevant to the latest question.
///
/// The query is enriched with the last few messages before it, scoped to the user (isolation),
/// and excludes the current session: that conversation is already in the checkpointed messages,
/// and recalling it again only costs tokens.
///
/// # Errors
/// A memory backend failure or an invalid user id.
pub async fn retrieve(
    s: AgentState,
    rt: Runtime<AgentContext>,
) -> Result<AgentStateUpdate, mnemograph_memory::Error> {
    let Some(at) = last_human(&s.messages) else {
        return Ok(AgentStateUpdate::retrieved_history(Vec::new()));
    };
    let question = s.messages[at].text();
    let start = at.saturating_sub(ENRICH_RECENT);
    let recent: Vec<String> = s.messages[start..at].iter().map(Message::text).collect();
    let scope =
        if s.session_id.is_empty() { SessionScope::All } else { SessionScope::Exclude(s.session_id.clone()) };
    let ctx = rt.context();
    let query = RetrieveQuery::new(s.user_id.as_str(), question)
        .recent(recent)
        .top_k(ctx.top_k)
        .min_importance(MIN_RECALL_IMPORTANCE)
        .session(scope)
        .now(ctx.clock.now());
    let hits = ctx.memory.retrieve(query).await?;
    Ok(AgentStateUpdate::retrieved_history(hits))
}

/// The system prompt: the recalled memories (or a note that there are none), then instructions.
pub fn system_prompt(recalled: &[MemoryHit]) -> String {
    let mut prompt = String::from(
        "You are a question-answering assistant with long-term memory. These past exchanges with \
         the current user, from earlier sessions, may help you answer:\n\n",
    );
    if recalled.is_empty() {
        prompt.push_str("(no relevant history)\n");
    }
    for (i, r) in recalled.iter().enumerate() {
        prompt.push_str(&format!(
            "{MEMORY_HEADER}{} | session {} | score {:.2}]\n{}\n---\n",
            i + 1,
            r.record.session_id,
            r.score,
            r.record.content
        ));
    }
    prompt.push_str(
        "\nAnswer using these memories and the conversation below. If neither contains the answer, \
         say you do not know. Be brief.",
    );
    prompt
}

/// The request sent to the model: the system prompt with memories, then the newest part of the
/// conversation that fits in `max_tokens` with it (see [`trim_conversation`]; the latest question
/// is always sent). Stored system messages are left out: the prompt is rebuilt every turn.
pub fn build_request(s: &AgentState, max_tokens: usize) -> ChatRequest {
    let system = Message::system(system_prompt(&s.retrieved_history));
    let conversation = trim_conversation(&s.messages, &system, max_tokens);
    let mut messages = Vec::with_capacity(conversation.len() + 1);
    messages.push(system);
    messages.extend(conversation);
    ChatRequest::new(messages).with_temperature(0.0)
}

/// `call_model`: answers the latest question with the recalled memories injected into the prompt.
///
/// Uses `invoke_in_graph`, so a run streaming [`StreamMode::Messages`](mnemograph_core::StreamMode)
/// (the interactive mode) sees the reply token by token.
///
/// # Errors
/// The model's failure (unreachable endpoint, bad key, ...).
pub async fn call_model(
    s: AgentState,
    rt: Runtime<AgentContext>,
) -> Result<AgentStateUpdate, mnemograph_models::Error> {
    let ctx = rt.context();
    let reply = ctx.model.invoke_in_graph(build_request(&s, ctx.max_context_tokens), &rt).await?;
    Ok(AgentStateUpdate::messages(vec![reply]))
}

/// `save_memory`: writes this turn (question and answer) to long-term memory, on the hot path,
/// with the importance [`AgentContext::importance`] gives it (the model's score, or the offline
/// rule), and when the user stated something, retires the older memories it supersedes (the update
/// path: "I moved to Shanghai" retires "I live in Beijing", so later sessions recall only the
/// new fact). The reasons land in [`AgentState::retired`]. When the chat model's decision fails,
/// the offline rule decides and the reasons say so ([`FallbackDecider`](crate::FallbackDecider)).
///
/// # Errors
/// A memory backend failure.
pub async fn save_memory(
    s: AgentState,
    rt: Runtime<AgentContext>,
) -> Result<AgentStateUpdate, mnemograph_memory::Error> {
    let (Some(question), Some(answer)) =
        (last_text(&s.messages, MessageType::Human), last_text(&s.messages, MessageType::Ai))
    else {
        return Ok(AgentStateUpdate::default());
    };
    let ctx = rt.context();
    let turn = NewMemory::turn(s.user_id.as_str(), s.session_id.as_str(), &question, &answer)
        .importance(ctx.importance.score(&question, &answer).await)
        .meta("thread_id", crate::thread_id(&s.user_id, &s.session_id))
        .created_at(ctx.clock.now());
    let statement = !is_question(&question);
    let (_, report) = ctx.consolidator.save_turn(&ctx.memory, turn, statement).await?;
    Ok(AgentStateUpdate::retired(report.retired.into_iter().map(|r| r.reason).collect::<Vec<_>>()))
}
