//! [`ChatRequest`]: what a chat model is asked.

use mnemograph_core::messages::Message;
use serde_json::{Map, Value};

use crate::tools::ToolSpec;

/// Whether and which tool the model must call (OpenAI's `tool_choice`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (`"auto"`).
    Auto,
    /// No tool calls (`"none"`).
    None,
    /// At least one tool call (`"required"`).
    Required,
    /// This tool.
    Tool(String),
}

impl ToolChoice {
    /// The OpenAI wire form.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Auto => Value::from("auto"),
            Self::None => Value::from("none"),
            Self::Required => Value::from("required"),
            Self::Tool(name) => serde_json::json!({"type": "function", "function": {"name": name}}),
        }
    }
}

/// One call to a chat model: the conversation, the tools on offer and sampling options.
///
/// ```
/// use mnemograph_core::messages::Message;
/// use mnemograph_models::{ChatRequest, ToolSpec};
///
/// let request = ChatRequest::new(vec![Message::human("2+2?")])
///     .with_tools(vec![ToolSpec::new("calc", "evaluates arithmetic", serde_json::json!({"type": "object"}))])
///     .with_temperature(0.0);
/// assert_eq!(request.tools[0].name, "calc");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ChatRequest {
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// Tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Tool choice; `None` leaves it to the provider.
    pub tool_choice: Option<ToolChoice>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Cap on generated tokens.
    pub max_tokens: Option<u32>,
    /// Stop sequences.
    pub stop: Vec<String>,
    /// Extra body keys sent verbatim (provider switches such as `enable_thinking`).
    pub extra: Map<String, Value>,
}

impl ChatRequest {
    /// A request with these messages and nothing else set.
    pub fn new(messages: Vec<Message>) -> Self {
        Self { messages, ..Self::default() }
    }
    /// Sets the tools.
    #[must_use]
    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> Self {
        self.tools = tools;
        self
    }
    /// Sets the tool choice.
    #[must_use]
    pub fn with_tool_choice(mut self, choice: ToolChoice) -> Self {
        self.tool_choice = Some(choice);
        self
    }
    /// Sets the temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }
    /// Sets the token cap.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }
    /// Adds an extra body key.
    #[must_use]
    pub fn with_extra(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra.insert(key.into(), value);
        self
    }
}
