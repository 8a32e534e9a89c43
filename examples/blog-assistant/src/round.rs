//! One chat round as the client sees it: the agent's stream events turned into the service's
//! events (`token`, `tool_call`, `citations`, `done`, `error`), and what the round produced.
//!
//! Pure bookkeeping, no IO: [`RoundLog::observe`] is fed every `messages`/`updates` event of
//! the run; when the run ends the log holds the final answer and its citations.

use mnemograph_agent::{AgentState, MODEL_NODE, TOOLS_NODE};
use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::StreamEvent;
use serde::Serialize;
use serde_json::Value;

use crate::corpus::Citation;
use crate::tools::{citations_of, GET_ARTICLE_CONTENT};

/// An event of the `POST /chat/stream` response; its SSE event name is
/// [`name`](Self::name) and its data the JSON of the payload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RoundEvent {
    /// A piece of the model's text, as it streams.
    Token {
        /// The text.
        text: String,
    },
    /// The model asked for a tool.
    ToolCall {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments.
        args: Value,
    },
    /// The sources of the answer.
    Citations {
        /// Articles, in the order the agent met them.
        citations: Vec<Citation>,
    },
    /// The round completed and is stored.
    Done {
        /// The thread (`user_id:session_id`).
        thread_id: String,
        /// The whole answer.
        answer: String,
    },
    /// The round failed; nothing was archived.
    Error {
        /// What went wrong.
        message: String,
    },
}

impl RoundEvent {
    /// The SSE event name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Token { .. } => "token",
            Self::ToolCall { .. } => "tool_call",
            Self::Citations { .. } => "citations",
            Self::Done { .. } => "done",
            Self::Error { .. } => "error",
        }
    }
}

/// What a round produced so far.
#[derive(Debug, Default)]
pub struct RoundLog {
    /// The text of the model's latest reply without tool calls: the answer.
    answer: Option<String>,
    /// Articles the agent read with `get_article_content`.
    read: Vec<Citation>,
    /// Articles search results listed.
    found: Vec<Citation>,
}

impl RoundLog {
    /// Takes in one event of the run, returning the client events it gives.
    ///
    /// Tokens come from the `messages` mode (only the model node's, and only text). Tool calls
    /// and the final answer come from the model node's `updates`, i.e. whole replies, so a call
    /// is announced once with complete arguments. Citations come from the tools node's
    /// ToolMessage artifacts.
    pub fn observe(&mut self, event: StreamEvent<AgentState>) -> Vec<RoundEvent> {
        match event {
            StreamEvent::Messages { chunk, metadata } if &*metadata.node == MODEL_NODE => {
                let text = chunk.text();
                if text.is_empty() {
                    Vec::new()
                } else {
                    vec![RoundEvent::Token { text }]
                }
            }
            StreamEvent::Updates { node, updates } if node == MODEL_NODE => {
                let replies = updates.into_iter().flat_map(|u| u.messages.unwrap_or_default());
                replies.filter(|m| m.kind() == MessageType::Ai).flat_map(|m| self.reply(&m)).collect()
            }
            StreamEvent::Updates { node, updates } if node == TOOLS_NODE => {
                for m in updates.into_iter().flat_map(|u| u.messages.unwrap_or_default()) {
                    self.tool_result(&m);
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// A whole AI reply: its tool calls, or (without calls) the answer so far.
    fn reply(&mut self, m: &Message) -> Vec<RoundEvent> {
        if m.tool_calls().is_empty() {
            self.answer = Some(m.text());
            return Vec::new();
        }
        m.tool_calls()
            .iter()
            .map(|c| RoundEvent::ToolCall {
                id: c.id.clone().unwrap_or_default(),
                name: c.name.clone(),
                args: c.args.clone(),
            })
            .collect()
    }

    /// A ToolMessage: remember the articles its artifact cites.
    fn tool_result(&mut self, m: &Message) {
        let Some(artifact) = m.artifact() else { return };
        let list = if m.name() == Some(GET_ARTICLE_CONTENT) { &mut self.read } else { &mut self.found };
        for c in citations_of(artifact) {
            if !list.contains(&c) {
                list.push(c);
            }
        }
    }

    /// The round that ends `messages`: the last human message is its question, and the
    /// messages after it are read as the run's updates are (AI replies give the answer, tool
    /// results the citations). `None` without a human message.
    pub fn of_messages(messages: &[Message]) -> Option<(String, Self)> {
        let start = messages.iter().rposition(|m| m.kind() == MessageType::Human)?;
        let mut log = Self::default();
        for m in &messages[start + 1..] {
            match m.kind() {
                MessageType::Ai => {
                    log.reply(m);
                }
                MessageType::Tool => log.tool_result(m),
                _ => {}
            }
        }
        Some((messages[start].text(), log))
    }

    /// The answer, if the model gave one with text.
    pub fn answer(&self) -> Option<&str> {
        self.answer.as_deref().filter(|a| !a.trim().is_empty())
    }

    /// The answer's sources: the articles the agent read, or when it read none, those its
    /// searches found (an answer made from search snippets still cites them).
    pub fn citations(&self) -> Vec<Citation> {
        if self.read.is_empty() {
            self.found.clone()
        } else {
            self.read.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemograph_agent::AgentStateUpdate;
    use mnemograph_core::messages::ToolCall;
    use mnemograph_core::EventMetadata;
    use serde_json::json;

    fn meta(node: &str) -> EventMetadata {
        EventMetadata { node: node.into(), step: 1, task_id: "t".into(), checkpoint_ns: "".into() }
    }

    fn update(node: &str, messages: Vec<Message>) -> StreamEvent<AgentState> {
        StreamEvent::Updates { node: node.to_owned(), updates: vec![AgentStateUpdate::messages(messages)] }
    }

    #[test]
    fn events_follow_the_run_and_the_log_keeps_answer_and_sources() {
        let mut log = RoundLog::default();
        let token =
            |t: &str, node: &str| StreamEvent::Messages { chunk: Message::ai(t), metadata: meta(node) };
        assert_eq!(log.observe(token("先搜", MODEL_NODE)), [RoundEvent::Token { text: "先搜".into() }]);
        assert!(log.observe(token("", MODEL_NODE)).is_empty());
        assert!(log.observe(token("x", "elsewhere")).is_empty());

        let call = Message::ai("先搜").with_tool_calls(vec![ToolCall::new(
            "search_blog",
            json!({"query": "q"}),
            "c1",
        )]);
        let events = log.observe(update(MODEL_NODE, vec![call]));
        assert_eq!(events[0].name(), "tool_call");
        assert_eq!(serde_json::to_value(&events[0]).unwrap()["args"]["query"], "q");

        let a = Citation { title: "A".into(), url: "https://a".into() };
        let b = Citation { title: "B".into(), url: "https://b".into() };
        let found =
            Message::tool("[..]", "c1").with_name("search_blog").with_artifact(json!({"citations": [a, b]}));
        assert!(log.observe(update(TOOLS_NODE, vec![found])).is_empty());
        assert_eq!(log.citations().len(), 2, "search hits cite when nothing was read");
        let read = Message::tool("# B", "c2")
            .with_name(GET_ARTICLE_CONTENT)
            .with_artifact(json!({"citations": [b]}));
        log.observe(update(TOOLS_NODE, vec![read]));
        assert_eq!(log.citations(), std::slice::from_ref(&b));

        assert_eq!(log.answer(), None);
        log.observe(update(MODEL_NODE, vec![Message::ai("根据《B》…")]));
        assert_eq!(log.answer(), Some("根据《B》…"));
    }
}
