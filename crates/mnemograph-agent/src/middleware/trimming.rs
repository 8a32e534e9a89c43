//! [`TrimmingMiddleware`]: a `@before_model` compaction that keeps the checkpointed conversation
//! small.

use std::fmt;
use std::sync::Arc;

use mnemograph_core::messages::{Content, Message, MessageType};
use mnemograph_core::{BoxError, Runtime};
use mnemograph_models::{ApproxTokenCounter, TokenCounter};

use super::{Hook, HookResult, Middleware, ModelNext, ModelRequest, ModelResponse};
use crate::state::{AgentState, AgentStateUpdate};
use crate::trim::{trim_messages, TrimOptions};

/// Default longest ToolMessage kept whole, in characters.
pub const DEFAULT_MAX_TOOL_CHARS: usize = 2000;

/// Keeps the checkpointed conversation small, before every model call (a `@before_model`
/// middleware):
///
/// 1. drops empty AI messages (no text and no tool calls; failed or aborted generations);
/// 2. truncates every ToolMessage longer than [`max_tool_chars`](Self::max_tool_chars)
///    characters (default 2000), so one `get_article_content` result cannot fill the context
///    for the rest of the conversation;
/// 3. keeps a system message and the most recent turns that fit in the token budget, counted
///    with the mixed Chinese/English [`ApproxTokenCounter`] (tool-call names and arguments
///    included) unless another counter is set; the kept part starts at a human message and
///    never splits a tool call from its results (see [`trim_messages`]); when even the latest
///    turn does not fit, that turn is kept whole rather than sending the model nothing;
/// 4. if anything changed, returns `[RemoveMessage(REMOVE_ALL_MESSAGES), kept..]`, so the
///    reducer replaces the stored history and the checkpoint shrinks instead of keeping the old
///    messages forever. If nothing changed it returns no update (no needless rewrite);
/// 5. around the model call, counts the agent's system prompt (which is not in the state)
///    against the same budget and, if needed, sends the model fewer turns, so the request as a
///    whole stays within `max_tokens`.
///
/// ```
/// use mnemograph_agent::TrimmingMiddleware;
///
/// let trim = TrimmingMiddleware::new(3000).with_max_tool_chars(1500);
/// assert_eq!(trim.max_tool_chars(), 1500);
/// ```
#[derive(Clone)]
pub struct TrimmingMiddleware {
    /// Token budget of the kept conversation.
    max_tokens: usize,
    /// Longest ToolMessage kept whole.
    max_tool_chars: usize,
    /// How tokens are counted.
    counter: Arc<dyn TokenCounter>,
}

impl fmt::Debug for TrimmingMiddleware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrimmingMiddleware")
            .field("max_tokens", &self.max_tokens)
            .field("max_tool_chars", &self.max_tool_chars)
            .finish_non_exhaustive()
    }
}

impl TrimmingMiddleware {
    /// Keeps at most `max_tokens` tokens of conversation.
    pub fn new(max_tokens: usize) -> Self {
        Self {
            max_tokens,
            max_tool_chars: DEFAULT_MAX_TOOL_CHARS,
            counter: Arc::new(ApproxTokenCounter::new()),
        }
    }
    /// Sets the longest ToolMessage kept whole.
    #[must_use]
    pub fn with_max_tool_chars(mut self, chars: usize) -> Self {
        self.max_tool_chars = chars;
        self
    }
    /// Counts tokens with `counter` (e.g. a `TiktokenCounter`).
    #[must_use]
    pub fn with_counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self
    }
    /// The longest ToolMessage kept whole.
    pub fn max_tool_chars(&self) -> usize {
        self.max_tool_chars
    }

    /// The compacted conversation, or `None` when it is already compact. Pure: this is the
    /// hook minus the state plumbing, usable on its own.
    pub fn compact(&self, messages: &[Message]) -> Option<Vec<Message>> {
        let mut changed = false;
        let mut cleaned: Vec<Message> = Vec::with_capacity(messages.len());
        for m in messages {
            if is_empty_ai(m) {
                changed = true;
                continue;
            }
            match truncate_tool(m, self.max_tool_chars) {
                Some(short) => {
                    changed = true;
                    cleaned.push(short);
                }
                None => cleaned.push(m.clone()),
            }
        }
        match self.fit(&cleaned, self.max_tokens) {
            Some(kept) => Some(kept),
            None => changed.then_some(cleaned),
        }
    }

    /// The most recent turns of `messages` that fit in `budget` tokens (a system message at the
    /// start kept), or `None` when all of them fit.
    fn fit(&self, messages: &[Message], budget: usize) -> Option<Vec<Message>> {
        let options = TrimOptions::new(budget).include_system().start_on(MessageType::Human);
        let mut kept = trim_messages(messages, &*self.counter, &options);
        let has_turn = kept.iter().any(|m| m.kind() != MessageType::System);
        if !has_turn {
            // Even the latest turn is over budget: keep it whole (and the system prompt), since
            // a model call with no conversation at all helps nobody.
            if let Some(last_human) = messages.iter().rposition(|m| m.kind() == MessageType::Human) {
                kept = messages
                    .iter()
                    .take_while(|m| m.kind() == MessageType::System)
                    .take(1)
                    .cloned()
                    .collect();
                kept.extend_from_slice(&messages[last_human..]);
            }
        }
        (kept.len() != messages.len()).then_some(kept)
    }
}

/// An AI message with neither text nor tool calls.
fn is_empty_ai(m: &Message) -> bool {
    m.kind() == MessageType::Ai
        && m.tool_calls().is_empty()
        && m.invalid_tool_calls().is_empty()
        && m.content().as_str().map_or_else(|| m.text().trim().is_empty(), |t| t.trim().is_empty())
}

/// The message with its text cut to `max_chars` characters, if it is a longer ToolMessage.
fn truncate_tool(m: &Message, max_chars: usize) -> Option<Message> {
    if m.kind() != MessageType::Tool {
        return None;
    }
    let text = match m.content() {
        // A UTF-8 string of at most `max_chars` bytes has at most that many characters: skip
        // the character count for the common short result.
        Content::Text(t) if t.len() <= max_chars => return None,
        Content::Text(t) => std::borrow::Cow::Borrowed(t.as_str()),
        _ => std::borrow::Cow::Owned(m.text()),
    };
    let total = text.chars().count();
    if total <= max_chars {
        return None;
    }
    let cut = text.char_indices().nth(max_chars).map_or(text.len(), |(i, _)| i);
    let short = format!("{}\n...[truncated: {} of {total} characters kept]", &text[..cut], max_chars);
    let mut out = Message::tool(short, m.tool_call_id().unwrap_or_default())
        .with_status(m.status().unwrap_or_default())
        .with_additional_kwargs(m.additional_kwargs().clone());
    if let Some(name) = m.name() {
        out = out.with_name(name);
    }
    if let Some(id) = m.id() {
        out = out.with_id(id);
    }
    // The artifact is for the application (e.g. citations), never sent to the model: keep it.
    if let Some(artifact) = m.artifact() {
        out = out.with_artifact(artifact.clone());
    }
    Some(out)
}

impl Middleware for TrimmingMiddleware {
    fn name(&self) -> &str {
        "trimming"
    }
    fn hooks(&self) -> &'static [Hook] {
        &[Hook::BeforeModel]
    }
    async fn before_model(&self, state: &AgentState, _runtime: &Runtime) -> HookResult {
        Ok(self.compact(&state.messages).map(|kept| {
            let mut messages = Vec::with_capacity(kept.len() + 1);
            messages.push(Message::remove_all());
            messages.extend(kept);
            AgentStateUpdate::messages(messages)
        }))
    }

    /// The agent's system prompt is sent on every call but is not in the state the hook
    /// trimmed, so the budget is enforced again here, on what the model receives: the
    /// conversation is cut to what fits beside the system prompt. Only this call sees the cut;
    /// the stored history keeps the hook's result.
    async fn wrap_model_call(
        &self,
        mut request: ModelRequest,
        next: ModelNext<'_>,
    ) -> Result<ModelResponse, BoxError> {
        if let Some(prompt) = request.system_prompt.as_deref() {
            let reserved = self.counter.count_message(&Message::system(prompt));
            let budget = self.max_tokens.saturating_sub(reserved);
            if let Some(kept) = self.fit(&request.messages, budget) {
                request.messages = kept;
            }
        }
        next.run(request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemograph_core::messages::{ToolCall, ToolStatus};
    use serde_json::json;

    #[test]
    fn truncates_long_tool_messages_by_characters() {
        let long = "长".repeat(2500);
        let artifact = json!({"citations": [{"title": "长文", "url": "https://blog.example/long"}]});
        let m = Message::tool(long, "c1")
            .with_id("t1")
            .with_name("get_article_content")
            .with_artifact(artifact.clone());
        let short = truncate_tool(&m, 2000).unwrap();
        assert!(short.text().starts_with(&"长".repeat(2000)));
        assert!(short.text().contains("2000 of 2500"));
        assert_eq!(
            (short.id(), short.tool_call_id(), short.name()),
            (Some("t1"), Some("c1"), Some("get_article_content"))
        );
        assert_eq!(short.status(), Some(ToolStatus::Success));
        assert_eq!(short.artifact(), Some(&artifact), "the artifact survives truncation");
        assert!(truncate_tool(&Message::tool("短".repeat(2000), "c"), 2000).is_none());
    }

    #[test]
    fn compact_drops_empty_ai_and_is_none_when_nothing_changes() {
        let trim = TrimmingMiddleware::new(10_000);
        let tidy = vec![Message::system("s"), Message::human("q"), Message::ai("a")];
        assert!(trim.compact(&tidy).is_none());
        let mut messy = tidy.clone();
        messy.insert(2, Message::ai("  "));
        assert_eq!(trim.compact(&messy).unwrap(), tidy);
        let call = Message::ai("").with_tool_calls(vec![ToolCall::new("t", json!({}), "c")]);
        assert!(!is_empty_ai(&call));
    }

    #[test]
    fn over_budget_latest_turn_is_kept_whole() {
        let trim = TrimmingMiddleware::new(20);
        let history = vec![
            Message::system("sys"),
            Message::human("old question"),
            Message::ai("old answer"),
            Message::human("请详细解释一下 LangGraph 的 checkpoint 机制以及它与 Redis 的关系"),
        ];
        let kept = trim.compact(&history).unwrap();
        assert_eq!(kept, [history[0].clone(), history[3].clone()]);
    }
}
