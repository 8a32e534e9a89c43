//! The three nodes of the agent's graph (retrieve → call_model → save_memory) and the prompt that
//! injects recalled memories.

use std::collections::HashSet;

use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::Runtime;
use mnemograph_memory::{Memory, MemoryHit, NewMemory, RetrieveQuery, SessionScope, ENRICH_RECENT};
use mnemograph_models::{ChatModelExt, ChatRequest, SharedChatModel};

use crate::answers::Answers;
use crate::consolidate::{AgentConsolidator, Clock};
use crate::importance::{ImportanceScorer, MIN_RECALL_IMPORTANCE};
use crate::memory::AgentMemory;
use crate::question::is_question;
use crate::relations;
use crate::state::{last_human, last_text, AgentState, AgentStateUpdate};
use crate::summarizer::{user_line, AgentSummarizer};
use crate::trim::{trim_conversation, DEFAULT_MAX_CONTEXT_TOKENS};
use crate::when::time_window;
use crate::whose::{about_someone_else, asks_about_the_user, remarks_on_something};

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
    /// Puts the newest of the user's statements that answer a question about the user first
    /// (see [`Answers`]); `None` keeps the memory's order.
    pub answers: Option<Answers>,
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
            answers: None,
        }
    }

    /// Sets how the user's own statements are ordered for a question about the user.
    #[must_use]
    pub fn with_answers(mut self, answers: Option<Answers>) -> Self {
        self.answers = answers;
        self
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
/// The query is enriched with the last few messages before it and scoped to the user
/// (isolation). It searches every session, the current one included, but never returns an
/// exchange of the current session that the model request can still hold (see
/// [`exchanges_in_reach`]): that part of the conversation is sent as messages, and recalling it
/// again only costs tokens, while what trimming dropped is only in long-term memory.
///
/// A time expression in the question ("yesterday", "上周", "in March"; see [`time_window`])
/// narrows recall to memories created in that window, by the agent's clock. When the window
/// holds nothing, recall searches all time instead, and [`AgentState::window_fallback`] says so.
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
    let ctx = rt.context();
    let now = ctx.clock.now();
    let in_reach = exchanges_in_reach(&s.messages, ctx.max_context_tokens);
    // Asks for as many more as could be dropped, so that dropping them still leaves the top k,
    // and for 3k more, which a statement about someone else can make way for, and among which a
    // newer answer to the question can be found. When the user's statements on the question's
    // subject answer it (`Answers` with subjects), for 7k more: an answer worded unlike the
    // question ranks low in the memory, and the subject still finds it there.
    let per_k = if ctx.answers.as_ref().is_some_and(Answers::by_subject) { 8 } else { 4 };
    let query = RetrieveQuery::new(s.user_id.as_str(), question.as_str())
        .recent(recent)
        .top_k(per_k * ctx.top_k + in_reach.len())
        .min_importance(MIN_RECALL_IMPORTANCE)
        .session(SessionScope::All)
        .now(now);
    let window = time_window(&question, now);
    let (hits, fallback) = match &window {
        Some(w) => {
            let hits =
                recall(ctx, query.clone().since(w.since).until(w.until), &s.session_id, &in_reach).await?;
            if hits.is_empty() {
                (recall(ctx, query, &s.session_id, &in_reach).await?, true)
            } else {
                (hits, false)
            }
        }
        None => (recall(ctx, query, &s.session_id, &in_reach).await?, false),
    };
    Ok(AgentStateUpdate::retrieved_history(hits).with_recall_window(window).with_window_fallback(fallback))
}

/// The top k hits of `query`, without the exchanges of `session` in `in_reach`. For a question
/// about the user, what the user said about someone else, or remarked on a thing or an event,
/// comes after what they said about themselves ([`whose`](crate::whose)).
async fn recall(
    ctx: &AgentContext,
    query: RetrieveQuery,
    session: &str,
    in_reach: &HashSet<String>,
) -> Result<Vec<MemoryHit>, mnemograph_memory::Error> {
    let about_the_user = asks_about_the_user(&query.query);
    let question = query.query.clone();
    let hits = ctx.memory.retrieve(query).await?;
    let (mut own, others): (Vec<MemoryHit>, Vec<MemoryHit>) = hits
        .into_iter()
        .filter(|h| h.record.session_id != session || !in_reach.contains(&h.record.content))
        .partition(|h| !about_the_user || own_statement(user_line(&h.record.content)));
    if let (true, Some(answers)) = (about_the_user && is_question(&question), &ctx.answers) {
        own = answers.order(&question, own).await?;
    }
    // A question about one of the user's people: what the user said of that person comes first,
    // however the question names them ("mum", "老妈"); the rest keep their order.
    if let Some(person) =
        (!about_the_user && is_question(&question)).then(|| relations::named(&question)).flatten()
    {
        let (named, rest): (Vec<MemoryHit>, Vec<MemoryHit>) = own.into_iter().partition(|h| {
            let said = user_line(&h.record.content);
            !is_question(said) && relations::names(said, person)
        });
        own = named;
        own.extend(rest);
    }
    own.extend(others);
    own.truncate(ctx.top_k);
    Ok(own)
}

/// Whether the user's words `said` state something of the user themselves: neither about someone
/// else nor a remark on a thing.
fn own_statement(said: &str) -> bool {
    !about_someone_else(said) && !remarks_on_something(said)
}

/// The exchanges of the conversation `messages` that a request of `max_tokens` can still hold,
/// as long-term memory stores them (`User: …\nAssistant: …`).
///
/// The window is [`trim_conversation`]'s with a system prompt recalling nothing: the request
/// [`build_request`] sends holds at most this much (recalled memories only take room from the
/// conversation), so an exchange outside it is outside the request too.
pub fn exchanges_in_reach(messages: &[Message], max_tokens: usize) -> HashSet<String> {
    let kept = trim_conversation(messages, &Message::system(system_prompt(&[])), max_tokens);
    let mut exchanges = HashSet::new();
    for (i, m) in kept.iter().enumerate().filter(|(_, m)| m.kind() == MessageType::Human) {
        let next = kept[i + 1..]
            .iter()
            .position(|m| m.kind() == MessageType::Human)
            .map_or(kept.len(), |n| i + 1 + n);
        if let Some(answer) = last_text(&kept[i + 1..next], MessageType::Ai) {
            exchanges.insert(NewMemory::turn("", "", &m.text(), &answer).content);
        }
    }
    exchanges
}

/// The system prompt: the recalled memories (or a note that there are none), then instructions.
pub fn system_prompt(recalled: &[MemoryHit]) -> String {
    let mut prompt = String::from(
        "You are a question-answering assistant with long-term memory. These past exchanges with \
         the current user, from earlier sessions or from earlier in this one, may help you \
         answer:\n\n",
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
/// rule), and when the user stated something, retires the older memories it supersedes (the
/// update path: "I moved to Shanghai" retires "I live in Beijing", so later sessions recall only
/// the new fact; with the offline rule, only statements the user makes of themselves). The reasons land in [`AgentState::retired`]. When the chat model's decision fails,
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
    // The offline rule judges by similarity alone, so only what the user says of themselves goes
    // to it: a remark on a car, or news of a neighbour's car, names the same things as "I drive a
    // Civic" without changing it. The chat model judges what changed, so it sees every statement.
    let judged = matches!(ctx.consolidator, AgentConsolidator::Llm(_)) || own_statement(&question);
    let statement = !is_question(&question) && judged;
    let (_, report) = ctx.consolidator.save_turn(&ctx.memory, turn, statement).await?;
    // A statement's sentences are embedded as it is saved, not while a question that recalls it
    // waits. The turn is saved already: a failure here only leaves them to that question.
    if let (true, Some(answers)) = (statement, &ctx.answers) {
        if let Err(e) = answers.remember(&question).await {
            tracing::warn!(error = %e, "embedding the statement's sentences failed; a question will");
        }
    }
    Ok(AgentStateUpdate::retired(report.retired.into_iter().map(|r| r.reason).collect::<Vec<_>>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(i: usize) -> String {
        format!("User: Fact {i}: the harbour holds fishing boats and ferries.\nAssistant: Noted.")
    }

    #[test]
    fn the_exchanges_in_reach_are_the_newest_that_fit() {
        let mut messages = Vec::new();
        for i in 0..30 {
            messages.push(Message::human(format!("Fact {i}: the harbour holds fishing boats and ferries.")));
            messages.push(Message::ai("Noted."));
        }
        messages.push(Message::human("What now?"));

        let all = exchanges_in_reach(&messages, 100_000);
        assert_eq!(all, (0..30).map(exchange).collect::<HashSet<_>>(), "a thread that fits is all in reach");

        let some = exchanges_in_reach(&messages, 300);
        assert!((1..30).contains(&some.len()), "{}", some.len());
        let newest: HashSet<String> = (30 - some.len()..30).map(exchange).collect();
        assert_eq!(some, newest, "the newest exchanges, none skipped");
    }
}
