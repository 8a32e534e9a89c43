//! Token counting: [`TokenCounter`], an exact `TiktokenCounter` (feature `tiktoken`) and a fast
//! [`ApproxTokenCounter`] that is right for mixed Chinese/English text.
//!
//! Both count what the model is actually sent for a message: its text, its name, and for an AI
//! message every tool call's name and JSON arguments (a long `get_article_content` argument
//! list costs tokens like any text), plus OpenAI's fixed per-message framing.

mod approx;
#[cfg(feature = "tiktoken")]
mod tiktoken;

use mnemograph_core::messages::{Content, Message, MessageType};

pub use approx::ApproxTokenCounter;
#[cfg(feature = "tiktoken")]
pub use tiktoken::{Encoding, TiktokenCounter};

/// Framing tokens per message (`<|start|>{role}<|message|>…<|end|>`), from OpenAI's cookbook.
pub const TOKENS_PER_MESSAGE: usize = 3;
/// Tokens that prime the reply (`<|start|>assistant<|message|>`), counted once per request.
pub const REPLY_PRIMING_TOKENS: usize = 3;
/// Framing tokens per tool call (type, name and arguments keys).
pub const TOKENS_PER_TOOL_CALL: usize = 3;
/// What one image block is assumed to cost (LangChain's `count_tokens_approximately` default).
pub const TOKENS_PER_IMAGE: usize = 85;

/// Counts tokens of text and messages.
///
/// Only [`count_text`](Self::count_text) is required. The message methods count what the model
/// is sent for a message: its text, its name, and for an AI message every tool call's name and
/// JSON arguments, plus OpenAI's fixed framing ([`TOKENS_PER_MESSAGE`] per message,
/// [`TOKENS_PER_TOOL_CALL`] per call, [`REPLY_PRIMING_TOKENS`] per request).
///
/// ```
/// use mnemograph_core::messages::{Message, ToolCall};
/// use mnemograph_models::{ApproxTokenCounter, TokenCounter};
///
/// let counter = ApproxTokenCounter::new();
/// assert_eq!(counter.count_text("你好世界"), 4);
/// let call = Message::ai("").with_tool_calls(vec![ToolCall::new("search", serde_json::json!({"q": "天气"}), "c1")]);
/// assert!(counter.count_message(&call) > counter.count_message(&Message::ai("")));
/// ```
pub trait TokenCounter: Send + Sync {
    /// Tokens in `text`.
    fn count_text(&self, text: &str) -> usize;

    /// Tokens one message costs in a request.
    fn count_message(&self, message: &Message) -> usize {
        let role = match message.kind() {
            MessageType::Remove => return 0,
            MessageType::System => "system",
            MessageType::Human => "user",
            MessageType::Ai => "assistant",
            MessageType::Tool => "tool",
            _ => "user",
        };
        let mut tokens = TOKENS_PER_MESSAGE + self.count_text(role);
        tokens += match message.content() {
            Content::Text(text) => self.count_text(text),
            Content::Blocks(blocks) => blocks.iter().map(|b| self.count_block(b)).sum(),
            _ => 0,
        };
        if let Some(name) = message.name() {
            tokens += self.count_text(name) + 1;
        }
        for call in message.tool_calls() {
            tokens += TOKENS_PER_TOOL_CALL + self.count_text(&call.name);
            // Arguments are sent as compact JSON text: count that text, not the Rust value.
            tokens += self.count_text(&call.args.to_string());
        }
        for call in message.invalid_tool_calls() {
            tokens += TOKENS_PER_TOOL_CALL;
            tokens += call.name.as_deref().map_or(0, |n| self.count_text(n));
            tokens += call.args.as_deref().map_or(0, |a| self.count_text(a));
        }
        tokens
    }

    /// Tokens of one content block: text blocks by their text, images at a flat
    /// [`TOKENS_PER_IMAGE`], anything else by its JSON text.
    fn count_block(&self, block: &serde_json::Value) -> usize {
        match block {
            serde_json::Value::String(text) => self.count_text(text),
            serde_json::Value::Object(map) => match map.get("type").and_then(|t| t.as_str()) {
                Some("text") => map.get("text").and_then(|t| t.as_str()).map_or(0, |t| self.count_text(t)),
                Some("image" | "image_url") => TOKENS_PER_IMAGE,
                _ => self.count_text(&block.to_string()),
            },
            other => self.count_text(&other.to_string()),
        }
    }

    /// Tokens a request with these messages costs, reply priming included.
    fn count_messages(&self, messages: &[Message]) -> usize {
        messages.iter().map(|m| self.count_message(m)).sum::<usize>() + REPLY_PRIMING_TOKENS
    }
}

impl<T: TokenCounter + ?Sized> TokenCounter for &T {
    fn count_text(&self, text: &str) -> usize {
        (**self).count_text(text)
    }
}

impl<T: TokenCounter + ?Sized> TokenCounter for std::sync::Arc<T> {
    fn count_text(&self, text: &str) -> usize {
        (**self).count_text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemograph_core::messages::ToolCall;
    use serde_json::json;

    /// One token per byte, to check the framing arithmetic.
    struct Bytes;
    impl TokenCounter for Bytes {
        fn count_text(&self, text: &str) -> usize {
            text.len()
        }
    }

    #[test]
    fn message_framing_counts_role_name_and_tool_calls() {
        assert_eq!(Bytes.count_message(&Message::human("hi")), 3 + 4 + 2);
        assert_eq!(Bytes.count_message(&Message::human("hi").with_name("bo")), 3 + 4 + 2 + 3);
        let call = Message::ai("").with_tool_calls(vec![ToolCall::new("f", json!({"a": 1}), "id")]);
        assert_eq!(Bytes.count_message(&call), 3 + 9 + 3 + 1 + r#"{"a":1}"#.len());
        assert_eq!(Bytes.count_message(&Message::remove("x")), 0);
        assert_eq!(Bytes.count_messages(&[]), REPLY_PRIMING_TOKENS);
        let blocks =
            Message::human(vec![json!({"type": "text", "text": "ab"}), json!({"type": "image_url"})]);
        assert_eq!(Bytes.count_message(&blocks), 3 + 4 + 2 + TOKENS_PER_IMAGE);
    }
}
