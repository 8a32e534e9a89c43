//! [`MessageType`]: which LangChain message class a message is, and the names Python
//! uses for it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Which LangChain message class a [`Message`](crate::messages::Message) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum MessageType {
    /// `SystemMessage`: instructions for the model.
    System,
    /// `HumanMessage`: user input.
    Human,
    /// `AIMessage`: model output, possibly with tool calls and usage.
    Ai,
    /// `ToolMessage`: the result of one tool call.
    Tool,
    /// `RemoveMessage`: not a chat message but an instruction to
    /// [`add_messages`](crate::messages::add_messages) to delete the message with its id.
    Remove,
}

impl MessageType {
    /// LangChain's `type` string: `"system"`, `"human"`, `"ai"`, `"tool"` or `"remove"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::System => "system",
            Self::Human => "human",
            Self::Ai => "ai",
            Self::Tool => "tool",
            Self::Remove => "remove",
        }
    }

    /// The Python `(module, class)` that LangChain serializes this kind as.
    pub const fn lc_class(self) -> (&'static str, &'static str) {
        match self {
            Self::System => ("langchain_core.messages.system", "SystemMessage"),
            Self::Human => ("langchain_core.messages.human", "HumanMessage"),
            Self::Ai => ("langchain_core.messages.ai", "AIMessage"),
            Self::Tool => ("langchain_core.messages.tool", "ToolMessage"),
            Self::Remove => ("langchain_core.messages.modifier", "RemoveMessage"),
        }
    }

    /// The kind for a LangChain class name, accepting streaming chunk classes
    /// (`AIMessageChunk` reads as [`MessageType::Ai`]), as LangGraph turns chunks into
    /// whole messages. `None` for classes this crate does not model (`ChatMessage`,
    /// `FunctionMessage`).
    pub fn from_lc_class(class: &str) -> Option<Self> {
        Some(match class.strip_suffix("Chunk").unwrap_or(class) {
            "SystemMessage" => Self::System,
            "HumanMessage" => Self::Human,
            "AIMessage" => Self::Ai,
            "ToolMessage" => Self::Tool,
            "RemoveMessage" => Self::Remove,
            _ => return None,
        })
    }

    /// Parses a `type` or `role` value, accepting LangChain's aliases: `user` (human),
    /// `assistant` (ai), `developer` (system) and the chunk `type`s such as
    /// `AIMessageChunk`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "system" | "developer" => Self::System,
            "human" | "user" => Self::Human,
            "ai" | "assistant" => Self::Ai,
            "tool" => Self::Tool,
            "remove" => Self::Remove,
            class => return Self::from_lc_class(class),
        })
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lc_classes_and_type_names() {
        let cases = [
            (MessageType::System, "system", "langchain_core.messages.system", "SystemMessage"),
            (MessageType::Human, "human", "langchain_core.messages.human", "HumanMessage"),
            (MessageType::Ai, "ai", "langchain_core.messages.ai", "AIMessage"),
            (MessageType::Tool, "tool", "langchain_core.messages.tool", "ToolMessage"),
            (MessageType::Remove, "remove", "langchain_core.messages.modifier", "RemoveMessage"),
        ];
        for (kind, name, module, class) in cases {
            assert_eq!(kind.as_str(), name);
            assert_eq!(kind.lc_class(), (module, class));
            assert_eq!(MessageType::parse(name), Some(kind));
            assert_eq!(MessageType::from_lc_class(class), Some(kind));
        }
        assert_eq!(MessageType::parse("user"), Some(MessageType::Human));
        assert_eq!(MessageType::parse("assistant"), Some(MessageType::Ai));
        assert_eq!(MessageType::parse("AIMessageChunk"), Some(MessageType::Ai));
        assert_eq!(MessageType::parse("function"), None);
        assert_eq!(MessageType::from_lc_class("ChatMessage"), None);
    }
}
