//! Tool calls, tool results' status and token usage: the typed parts of AI and tool
//! messages.

use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// A model's request to call a tool, LangChain's `ToolCall` typed dict.
///
/// Serialized as `{"name", "args", "id", "type": "tool_call"}`, the order LangChain's
/// `tool_call()` factory produces. On input `type` is optional and ignored, a missing
/// or `null` `args` reads as `{}`.
///
/// # Example
///
/// ```
/// # use mnemograph_checkpoint::messages::ToolCall;
/// let call = ToolCall::new("search", serde_json::json!({"q": "rust"}), "call_1");
/// assert_eq!(
///     serde_json::to_string(&call).unwrap(),
///     r#"{"name":"search","args":{"q":"rust"},"id":"call_1","type":"tool_call"}"#
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// Name of the tool to call.
    pub name: String,
    /// Arguments, normally a JSON object.
    pub args: Value,
    /// Identifier that the answering [`Message::tool`](crate::messages::Message::tool)
    /// echoes as its `tool_call_id`.
    pub id: Option<String>,
}

impl ToolCall {
    /// A tool call with an id, the usual shape a provider returns.
    pub fn new(name: impl Into<String>, args: Value, id: impl Into<String>) -> Self {
        Self { name: name.into(), args, id: Some(id.into()) }
    }
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ToolCall", 4)?;
        s.serialize_field("name", &self.name)?;
        s.serialize_field("args", &self.args)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("type", "tool_call")?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The lenient input shape; `type` and unknown keys are ignored.
        #[derive(Deserialize)]
        struct Raw {
            /// Tool name; LangChain always has one, but `null` is tolerated.
            #[serde(default)]
            name: Option<String>,
            /// Arguments; `null` or missing becomes `{}`.
            #[serde(default)]
            args: Value,
            /// Call id.
            #[serde(default)]
            id: Option<String>,
        }
        let raw = Raw::deserialize(deserializer)?;
        Ok(Self {
            name: raw.name.unwrap_or_default(),
            args: match raw.args {
                Value::Null => Value::Object(Map::new()),
                args => args,
            },
            id: raw.id,
        })
    }
}

/// A tool call the provider returned but that could not be parsed (e.g. arguments that
/// are not valid JSON), LangChain's `InvalidToolCall`.
///
/// Serialized as `{"name", "args", "id", "error", "type": "invalid_tool_call"}`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct InvalidToolCall {
    /// Name of the tool, if the provider sent one.
    #[serde(default)]
    pub name: Option<String>,
    /// The raw, unparsable argument string.
    #[serde(default)]
    pub args: Option<String>,
    /// Call id.
    #[serde(default)]
    pub id: Option<String>,
    /// Why parsing failed.
    #[serde(default)]
    pub error: Option<String>,
}

impl Serialize for InvalidToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("InvalidToolCall", 5)?;
        s.serialize_field("name", &self.name)?;
        s.serialize_field("args", &self.args)?;
        s.serialize_field("id", &self.id)?;
        s.serialize_field("error", &self.error)?;
        s.serialize_field("type", "invalid_tool_call")?;
        s.end()
    }
}

/// Outcome of a tool execution, LangChain's `ToolMessage.status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ToolStatus {
    /// The tool ran normally (LangChain's default).
    #[default]
    Success,
    /// The tool failed; the content usually describes the error for the model.
    Error,
}

impl ToolStatus {
    /// The wire string: `"success"` or `"error"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
        }
    }
}

/// Token counts reported for one model call, LangChain's `UsageMetadata`.
///
/// Provider details such as `input_token_details: {"cache_read": ..}` or
/// `output_token_details: {"reasoning": ..}` are kept in [`extra`](Self::extra) and
/// serialized after the three counters.
///
/// # Example
///
/// ```
/// # use mnemograph_checkpoint::messages::UsageMetadata;
/// let usage = UsageMetadata::new(10, 5);
/// assert_eq!(usage.total_tokens, 15);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageMetadata {
    /// Prompt tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Completion tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Total as reported by the provider (usually input + output).
    #[serde(default)]
    pub total_tokens: u64,
    /// Any other keys, kept verbatim.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl UsageMetadata {
    /// Usage with `total_tokens = input_tokens + output_tokens` and no extra keys.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
            total_tokens: input_tokens.saturating_add(output_tokens),
            extra: Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_call_wire_form_and_lenient_input() {
        let call = ToolCall::new("t", json!({"q": 1}), "c1");
        let value = serde_json::to_value(&call).unwrap();
        assert_eq!(value, json!({"name": "t", "args": {"q": 1}, "id": "c1", "type": "tool_call"}));
        assert_eq!(serde_json::from_value::<ToolCall>(value).unwrap(), call);

        let minimal: ToolCall = serde_json::from_value(json!({"name": "t", "id": null})).unwrap();
        assert_eq!(minimal.args, json!({}));
        assert_eq!(minimal.id, None);
    }

    #[test]
    fn invalid_tool_call_wire_form() {
        let call = InvalidToolCall {
            name: Some("t".to_owned()),
            args: Some("{oops".to_owned()),
            id: Some("c1".to_owned()),
            error: None,
        };
        let text = serde_json::to_string(&call).unwrap();
        assert_eq!(text, r#"{"name":"t","args":"{oops","id":"c1","error":null,"type":"invalid_tool_call"}"#);
        assert_eq!(serde_json::from_str::<InvalidToolCall>(&text).unwrap(), call);
    }

    #[test]
    fn tool_status_strings() {
        assert_eq!(ToolStatus::default(), ToolStatus::Success);
        assert_eq!(serde_json::to_value(ToolStatus::Error).unwrap(), json!("error"));
        assert_eq!(ToolStatus::Success.as_str(), "success");
    }

    #[test]
    fn usage_keeps_provider_details_after_counters() {
        let text =
            r#"{"input_tokens":3,"output_tokens":4,"total_tokens":7,"output_token_details":{"reasoning":2}}"#;
        let usage: UsageMetadata = serde_json::from_str(text).unwrap();
        assert_eq!(usage.total_tokens, 7);
        assert_eq!(usage.extra["output_token_details"], json!({"reasoning": 2}));
        assert_eq!(serde_json::to_string(&usage).unwrap(), text);
    }
}
