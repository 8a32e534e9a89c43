//! Message content: a plain string or a list of provider content blocks.

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `content` of a chat message, mirroring LangChain's `str | list[str | dict]`.
///
/// Most messages carry [`Content::Text`]. Multimodal or provider-specific payloads
/// (images, `tool_use` blocks, Anthropic `cache_control`, ...) are kept verbatim as
/// [`Content::Blocks`], so nothing a provider sends is lost on a round trip.
///
/// On the wire `Text` is a JSON string and `Blocks` a JSON array; `null` reads as
/// empty text, as LangChain's `convert_to_messages` does (`content or ""`).
///
/// # Example
///
/// ```
/// # use mnemograph_checkpoint::messages::Content;
/// let blocks = Content::from(vec![
///     serde_json::json!({"type": "text", "text": "你好，"}),
///     serde_json::json!({"type": "image_url", "image_url": {"url": "data:..."}}),
///     serde_json::json!("世界"),
/// ]);
/// assert_eq!(blocks.text(), "你好，世界");
/// assert_eq!(Content::from("hi").text(), "hi");
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// Plain text, LangChain's `content: str`.
    Text(String),
    /// Content blocks, LangChain's `content: list[str | dict]`; each item is kept as is.
    Blocks(Vec<Value>),
}

impl Content {
    /// The textual part of the content, like LangChain's `BaseMessage.text`.
    ///
    /// For [`Content::Text`] this is the string itself. For [`Content::Blocks`] it
    /// concatenates, in order, every bare string block and the `text` of every block
    /// whose `type` is `"text"`; all other blocks (images, tool use, ...) are skipped.
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Blocks(blocks) => blocks.iter().filter_map(block_text).collect(),
        }
    }

    /// The string if this is [`Content::Text`], without allocating.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::Text(text) => Some(text),
            Self::Blocks(_) => None,
        }
    }

    /// `true` for empty text or an empty block list.
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Text(text) => text.is_empty(),
            Self::Blocks(blocks) => blocks.is_empty(),
        }
    }
}

/// The text a single block contributes to [`Content::text`], if any.
fn block_text(block: &Value) -> Option<&str> {
    match block {
        Value::String(text) => Some(text),
        Value::Object(map) if map.get("type").and_then(Value::as_str) == Some("text") => {
            map.get("text").and_then(Value::as_str)
        }
        _ => None,
    }
}

impl Default for Content {
    fn default() -> Self {
        Self::Text(String::new())
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<Vec<Value>> for Content {
    fn from(blocks: Vec<Value>) -> Self {
        Self::Blocks(blocks)
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => serializer.serialize_str(text),
            Self::Blocks(blocks) => blocks.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_value(Value::deserialize(deserializer)?).map_err(de::Error::custom)
    }
}

impl Content {
    /// Converts a decoded JSON value, accepting a string, an array or `null`.
    pub(crate) fn from_value(value: Value) -> Result<Self, String> {
        match value {
            Value::Null => Ok(Self::default()),
            Value::String(text) => Ok(Self::Text(text)),
            Value::Array(blocks) => Ok(Self::Blocks(blocks)),
            other => Err(format!("invalid message content: expected a string or a list, got {other}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_of_plain_string() {
        assert_eq!(Content::from("hello").text(), "hello");
        assert_eq!(Content::from(String::from("你好")).as_str(), Some("你好"));
    }

    #[test]
    fn text_concatenates_text_blocks_and_strings_only() {
        let content = Content::from(vec![
            json!({"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}),
            json!({"type": "image", "source": {"data": "1234"}}),
            json!("b"),
            json!({"type": "text", "text": 5}),
            json!({"text": "no type"}),
            json!({"type": "text", "text": "c"}),
        ]);
        assert_eq!(content.text(), "abc");
        assert_eq!(content.as_str(), None);
    }

    #[test]
    fn serde_round_trip() {
        let text = Content::from("你好");
        assert_eq!(serde_json::to_value(&text).unwrap(), json!("你好"));
        let blocks = Content::from(vec![json!({"type": "text", "text": "x"})]);
        let value = serde_json::to_value(&blocks).unwrap();
        assert_eq!(value, json!([{"type": "text", "text": "x"}]));
        assert_eq!(serde_json::from_value::<Content>(value).unwrap(), blocks);
        assert_eq!(serde_json::from_value::<Content>(json!("你好")).unwrap(), text);
    }

    #[test]
    fn null_is_empty_text_and_numbers_are_rejected() {
        let empty = serde_json::from_value::<Content>(Value::Null).unwrap();
        assert_eq!(empty, Content::default());
        assert!(empty.is_empty());
        let err = serde_json::from_value::<Content>(json!(3)).unwrap_err();
        assert!(err.to_string().contains("invalid message content"), "{err}");
    }
}
