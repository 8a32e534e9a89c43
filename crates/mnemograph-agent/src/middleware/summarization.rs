//! [`SummarizationMiddleware`]: replace the old part of the conversation with a summary.

use std::fmt;
use std::sync::Arc;

use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::Runtime;
use mnemograph_models::{ApproxTokenCounter, ChatModel, ChatRequest, SharedChatModel, TokenCounter};
use serde_json::{Map, Value};

use super::{Hook, HookResult, Middleware};
use crate::error::Error;
use crate::state::{AgentState, AgentStateUpdate};

/// The instruction sent with the messages to summarize.
pub const DEFAULT_SUMMARY_PROMPT: &str =
    "Summarize the conversation below so it can replace it as context for \
the rest of the conversation. Keep names, numbers, decisions, open questions and what the tools returned. \
Answer in the language of the conversation, with the summary only.";

/// The text that introduces the summary, as LangChain words it.
pub const SUMMARY_PREFIX: &str = "Here is a summary of the conversation to date:\n\n";

/// When the conversation exceeds a token threshold, asks a model to summarize everything but
/// the most recent messages, and replaces that prefix with one summary message (LangChain's
/// `SummarizationMiddleware`):
/// `[RemoveMessage(REMOVE_ALL_MESSAGES), HumanMessage(summary), ..kept]`, the summary tagged
/// `additional_kwargs.lc_source = "summarization"`.
///
/// A leading system message is kept as is. The cut is moved earlier so that an AI message with
/// tool calls is never separated from its ToolMessages.
///
/// ```
/// use mnemograph_agent::SummarizationMiddleware;
/// use mnemograph_models::ChatModelExt;
/// # struct Echo;
/// # impl mnemograph_models::ChatModel for Echo {
/// #     async fn invoke(&self, _: mnemograph_models::ChatRequest) -> mnemograph_models::Result<mnemograph_core::messages::Message> {
/// #         Ok(mnemograph_core::messages::Message::ai("summary"))
/// #     }
/// # }
/// let summarize = SummarizationMiddleware::new(Echo.shared(), 4000).keep_messages(10);
/// # let _ = summarize;
/// ```
#[derive(Clone)]
pub struct SummarizationMiddleware {
    /// The summarizing model.
    model: SharedChatModel,
    /// Summarize once the conversation exceeds this many tokens.
    trigger_tokens: usize,
    /// Messages kept verbatim at the end.
    keep: usize,
    /// How tokens are counted.
    counter: Arc<dyn TokenCounter>,
    /// The instruction.
    prompt: String,
}

impl fmt::Debug for SummarizationMiddleware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SummarizationMiddleware")
            .field("model", &self.model)
            .field("trigger_tokens", &self.trigger_tokens)
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
}

impl SummarizationMiddleware {
    /// Summarizes with `model` once the conversation exceeds `trigger_tokens`, keeping the last
    /// 20 messages (LangChain's default).
    pub fn new(model: SharedChatModel, trigger_tokens: usize) -> Self {
        Self {
            model,
            trigger_tokens,
            keep: 20,
            counter: Arc::new(ApproxTokenCounter::new()),
            prompt: DEFAULT_SUMMARY_PROMPT.to_owned(),
        }
    }
    /// Sets how many recent messages are kept verbatim.
    #[must_use]
    pub fn keep_messages(mut self, keep: usize) -> Self {
        self.keep = keep;
        self
    }
    /// Counts tokens with `counter`.
    #[must_use]
    pub fn with_counter(mut self, counter: impl TokenCounter + 'static) -> Self {
        self.counter = Arc::new(counter);
        self
    }
    /// Sets the instruction.
    #[must_use]
    pub fn with_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = prompt.into();
        self
    }

    /// Where the kept part starts: `keep` messages from the end, moved earlier while it would
    /// start on a ToolMessage (whose AI call must stay with it).
    fn cut_point(messages: &[Message], start: usize, keep: usize) -> usize {
        let mut cut = messages.len().saturating_sub(keep).max(start);
        while cut > start && messages[cut].kind() == MessageType::Tool {
            cut -= 1;
        }
        cut
    }
}

/// The conversation as plain lines for the summarizer.
fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        let role = match m.kind() {
            MessageType::Human => "User",
            MessageType::Ai => "Assistant",
            MessageType::Tool => "Tool",
            MessageType::System => "System",
            _ => continue,
        };
        out.push_str(role);
        out.push_str(": ");
        out.push_str(&m.text());
        for call in m.tool_calls() {
            out.push_str(&format!(" [calls {}({})]", call.name, call.args));
        }
        out.push('\n');
    }
    out
}

impl Middleware for SummarizationMiddleware {
    fn name(&self) -> &str {
        "summarization"
    }
    fn hooks(&self) -> &'static [Hook] {
        &[Hook::BeforeModel]
    }
    async fn before_model(&self, state: &AgentState, _runtime: &Runtime) -> HookResult {
        let messages = &state.messages;
        if self.counter.count_messages(messages) <= self.trigger_tokens {
            return Ok(None);
        }
        let start = usize::from(messages.first().is_some_and(|m| m.kind() == MessageType::System));
        let cut = Self::cut_point(messages, start, self.keep);
        if cut <= start {
            return Ok(None);
        }
        let request = ChatRequest::new(vec![
            Message::system(self.prompt.as_str()),
            Message::human(transcript(&messages[start..cut])),
        ]);
        // Not streamed: the summary is bookkeeping, not part of the answer the user watches.
        let summary = self.model.invoke(request).await.map_err(Error::Model)?;
        let mut kwargs = Map::new();
        kwargs.insert("lc_source".to_owned(), Value::from("summarization"));
        let summary =
            Message::human(format!("{SUMMARY_PREFIX}{}", summary.text())).with_additional_kwargs(kwargs);
        let mut update = Vec::with_capacity(messages.len() - cut + 3);
        update.push(Message::remove_all());
        update.extend(messages[..start].iter().cloned());
        update.push(summary);
        update.extend(messages[cut..].iter().cloned());
        Ok(Some(AgentStateUpdate::messages(update)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemograph_core::messages::ToolCall;
    use serde_json::json;

    #[test]
    fn cut_never_starts_on_a_tool_message() {
        let messages = vec![
            Message::system("s"),
            Message::human("q"),
            Message::ai("").with_tool_calls(vec![ToolCall::new("t", json!({}), "c")]),
            Message::tool("r", "c"),
            Message::ai("a"),
        ];
        assert_eq!(SummarizationMiddleware::cut_point(&messages, 1, 2), 2);
        assert_eq!(SummarizationMiddleware::cut_point(&messages, 1, 1), 4);
        assert_eq!(SummarizationMiddleware::cut_point(&messages, 1, 10), 1);
        assert!(transcript(&messages).contains("[calls t({})]"));
    }
}
