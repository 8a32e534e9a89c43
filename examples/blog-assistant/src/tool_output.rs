//! [`TruncateToolOutput`]: a tool's result is cut to [`MAX_TOOL_CHARS`] characters as the
//! tools node produces it, so the full text of an article never reaches the state, the stream
//! or the Redis snapshot.
//!
//! The trimming middleware also truncates ToolMessages, but only before the model call that
//! follows: the tools step's own output (and anything saved from it) would still hold the whole
//! article. Cutting in the tool-call wrapper makes the short form the only form.

use mnemograph_agent::{Middleware, ToolNext, ToolRequest};
use mnemograph_core::messages::{Message, MessageType};

/// Longest tool result kept, in characters; longer ones keep their first `MAX_TOOL_CHARS`
/// characters and a note saying how many there were.
pub const MAX_TOOL_CHARS: usize = 2000;

/// Room the truncation note takes on top of [`MAX_TOOL_CHARS`]; the trimming middleware's own
/// limit leaves it, so a result cut here is never cut a second time.
pub const NOTE_CHARS: usize = 100;

/// Wraps every tool call and truncates its result to [`MAX_TOOL_CHARS`] characters.
#[derive(Debug, Clone, Copy, Default)]
pub struct TruncateToolOutput;

impl TruncateToolOutput {
    /// `message` with its text cut to `max_chars` characters and a note appended, or unchanged
    /// when it is not a ToolMessage or is short enough. Name, id, call id, status and artifact
    /// (the citations) are kept.
    pub fn truncate(message: Message, max_chars: usize) -> Message {
        if message.kind() != MessageType::Tool {
            return message;
        }
        let text = message.text();
        let total = text.chars().count();
        if total <= max_chars {
            return message;
        }
        let cut = text.char_indices().nth(max_chars).map_or(text.len(), |(i, _)| i);
        let short = format!("{}\n...[truncated: {max_chars} of {total} characters kept]", &text[..cut]);
        let mut out = Message::tool(short, message.tool_call_id().unwrap_or_default())
            .with_status(message.status().unwrap_or_default())
            .with_additional_kwargs(message.additional_kwargs().clone());
        if let Some(name) = message.name() {
            out = out.with_name(name);
        }
        if let Some(id) = message.id() {
            out = out.with_id(id);
        }
        if let Some(artifact) = message.artifact() {
            out = out.with_artifact(artifact.clone());
        }
        out
    }
}

impl Middleware for TruncateToolOutput {
    fn name(&self) -> &str {
        "truncate_tool_output"
    }

    async fn wrap_tool_call(&self, request: ToolRequest, next: ToolNext<'_>) -> Message {
        Self::truncate(next.run(request).await, MAX_TOOL_CHARS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemograph_core::messages::ToolStatus;
    use serde_json::json;

    #[test]
    fn long_tool_results_are_cut_and_keep_their_metadata() {
        let long = Message::tool("长".repeat(30), "c1")
            .with_name("get_article_content")
            .with_status(ToolStatus::Success)
            .with_artifact(json!({"citations": []}));
        let cut = TruncateToolOutput::truncate(long, 10);
        assert_eq!(cut.text(), format!("{}\n...[truncated: 10 of 30 characters kept]", "长".repeat(10)));
        assert_eq!(cut.name(), Some("get_article_content"));
        assert_eq!(cut.tool_call_id(), Some("c1"));
        assert_eq!(cut.artifact(), Some(&json!({"citations": []})));

        let short = Message::tool("短", "c2");
        assert_eq!(TruncateToolOutput::truncate(short.clone(), 10), short);
        let human = Message::human("长".repeat(30));
        assert_eq!(TruncateToolOutput::truncate(human.clone(), 10), human);
    }
}
