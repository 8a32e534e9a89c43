//! Stored values as JSON: channel values and pending writes decoded through mnemograph-checkpoint's
//! LangGraph codec, and anything that does not decode kept as base64 next to the reason.

use base64::Engine as _;
use mnemograph_checkpoint::checkpoint::serde::loads_typed;
use mnemograph_checkpoint::value::ChannelValue;
use serde_json::{json, Map, Value as Json};

/// A stored value, decoded for display.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Decoded {
    /// The value as JSON: LangChain messages become their kwargs maps (with `type`), other ext
    /// values their plain payload (see mnemograph-checkpoint's `checkpoint::serde`), unknown ext values
    /// `{"__ext__": code, "base64": ...}`.
    Value(Json),
    /// Bytes that could not be decoded: unknown serializer type, malformed msgpack, ...
    Undecodable {
        /// The serializer type tag as stored (`msgpack`, `pickle`, ...), `?` when unknown.
        kind: String,
        /// Why decoding failed.
        error: String,
        /// The stored bytes, base64.
        base64: String,
    },
}

impl Decoded {
    /// Decodes a value a saver returned.
    pub fn from_channel_value(value: &ChannelValue) -> Self {
        match value.to_json() {
            Ok(json) => Self::Value(tidy(json)),
            Err(e) => match value {
                ChannelValue::Encoded(enc) => Self::undecodable(&enc.kind, e, &enc.bytes),
                _ => Self::undecodable("?", e, &[]),
            },
        }
    }

    /// Decodes `(type, bytes)` as LangGraph stores them, e.g. a blob read straight from a table.
    pub fn from_typed(kind: &str, bytes: &[u8]) -> Self {
        match loads_typed(kind, bytes) {
            Ok(value) => Self::from_channel_value(&value),
            Err(e) => Self::undecodable(kind, e, bytes),
        }
    }

    /// A value that could not be decoded.
    pub fn undecodable(kind: &str, error: impl std::fmt::Display, bytes: &[u8]) -> Self {
        Self::Undecodable {
            kind: kind.to_owned(),
            error: error.to_string(),
            base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    /// The JSON shown for this value; an undecodable one is
    /// `{"$undecodable": {"type", "error", "base64"}}`.
    pub fn to_json(&self) -> Json {
        match self {
            Self::Value(json) => json.clone(),
            Self::Undecodable { kind, error, base64 } => {
                json!({ "$undecodable": { "type": kind, "error": error, "base64": base64 } })
            }
        }
    }

    /// The decoded JSON, `None` when the value did not decode.
    pub fn json(&self) -> Option<&Json> {
        match self {
            Self::Value(json) => Some(json),
            Self::Undecodable { .. } => None,
        }
    }
}

/// Rewrites the `{"__ext__": code, "data": [byte, ...]}` maps mnemograph-checkpoint produces for ext types it
/// has no meaning for (numpy arrays, application codes) as `{"__ext__": code, "base64": "..."}`:
/// a long array of numbers helps nobody read a checkpoint.
fn tidy(value: Json) -> Json {
    match value {
        Json::Array(items) => Json::Array(items.into_iter().map(tidy).collect()),
        Json::Object(map) => {
            if let Some(raw) = raw_ext(&map) {
                return raw;
            }
            Json::Object(map.into_iter().map(|(k, v)| (k, tidy(v))).collect())
        }
        other => other,
    }
}

/// The base64 form of a raw ext map, `None` for any other map.
fn raw_ext(map: &Map<String, Json>) -> Option<Json> {
    if map.len() != 2 {
        return None;
    }
    let code = map.get("__ext__")?.as_i64()?;
    let bytes: Option<Vec<u8>> =
        map.get("data")?.as_array()?.iter().map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok())).collect();
    let base64 = base64::engine::general_purpose::STANDARD.encode(bytes?);
    Some(json!({ "__ext__": code, "base64": base64 }))
}

#[cfg(test)]
mod tests {
    use mnemograph_checkpoint::checkpoint::serde::dumps_typed;
    use mnemograph_checkpoint::messages::{Message, ToolCall};

    use super::*;

    #[test]
    fn messages_decode_to_their_langchain_maps() {
        let history = vec![
            Message::human("我们之前讨论过的 RAG 优化方案改了哪些参数？").with_id("h1"),
            Message::ai("").with_tool_calls(vec![ToolCall::new("search", json!({"q": "RAG"}), "c1")]),
        ];
        let (kind, bytes) = dumps_typed(&ChannelValue::new(history)).unwrap();
        let Decoded::Value(json) = Decoded::from_typed(&kind, &bytes) else { panic!("did not decode") };
        assert_eq!(json[0]["type"], "human");
        assert_eq!(json[0]["content"], "我们之前讨论过的 RAG 优化方案改了哪些参数？");
        assert_eq!(json[1]["tool_calls"][0]["name"], "search");
    }

    #[test]
    fn bad_bytes_and_unknown_types_are_kept_with_the_reason() {
        let bad = Decoded::from_typed("msgpack", &[0x92, 0x01]);
        let Decoded::Undecodable { kind, error, base64 } = &bad else { panic!("{bad:?}") };
        assert_eq!((kind.as_str(), base64.as_str()), ("msgpack", "kgE="));
        assert!(error.contains("msgpack"), "{error}");
        assert_eq!(bad.to_json()["$undecodable"]["base64"], "kgE=");
        let pickle = Decoded::from_typed("pickle", b"\x80\x04");
        assert!(matches!(pickle, Decoded::Undecodable { ref kind, .. } if kind == "pickle"));
        assert!(pickle.json().is_none());
    }

    #[test]
    fn unknown_ext_types_show_as_base64() {
        // fixext1 with code 42 and payload 0x07, inside a map.
        let bytes = [0x81, 0xa1, b'x', 0xd4, 42, 0x07];
        let decoded = Decoded::from_typed("msgpack", &bytes);
        assert_eq!(decoded, Decoded::Value(json!({"x": {"__ext__": 42, "base64": "Bw=="}})));
        // A user map that merely looks similar is left alone.
        assert_eq!(tidy(json!({"__ext__": 1, "data": "text"})), json!({"__ext__": 1, "data": "text"}));
    }
}
