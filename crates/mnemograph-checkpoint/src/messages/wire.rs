//! Serde for [`Message`]: LangChain's `model_dump()` map, key for key and in order.
//!
//! The same map is what LangGraph's msgpack serializer stores inside ext 5 next to the
//! class from [`Message::lc_class`], so writing it exactly here keeps the checkpoint
//! encoding byte-compatible with Python.
//!
//! Human-readable formats (JSON) get the plain map. Binary formats (rmp-serde, which is not
//! human-readable unless configured so) get LangGraph's ext 5 value
//! `[module, class, kwargs, "model_validate_json"]` through rmp-serde's `_ExtStruct` newtype:
//! the type itself marks a message, so no map is ever guessed to be one (see
//! [`checkpoint::serde`](crate::checkpoint::serde)). Reading accepts both forms.

use std::fmt;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Error as _, SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::checkpoint::serde::{
    deserialize_ext, ext::ExtRef, message_from_ext, EXT_PYDANTIC_V2, PYDANTIC_V2_METHOD,
};

use super::content::Content;
use super::kind::MessageType;
use super::message::{Message, MessageData};
use super::tool::ToolStatus;

/// The six keys every LangChain message dumps, in dump order.
const BASE_KEYS: usize = 6;

/// The `additional_kwargs` key LangChain sets when it reads a `developer` role.
const OPENAI_ROLE_KEY: &str = "__openai_role__";

impl Serialize for Message {
    /// Writes `content, additional_kwargs, response_metadata, type, name, id`, then
    /// `tool_calls, invalid_tool_calls, usage_metadata` for AI messages or
    /// `tool_call_id, artifact, status` for tool messages, then any unknown keys that
    /// were read with the message.
    ///
    /// For binary formats that map is wrapped as LangGraph's msgpack ext 5 instead.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            return Kwargs(self).serialize(serializer);
        }
        let (module, class) = self.lc_class();
        let payload = self
            .packed(|| rmp_serde::to_vec_named(&(module, class, Kwargs(self), PYDANTIC_V2_METHOD)))
            .map_err(S::Error::custom)?;
        ExtRef { code: EXT_PYDANTIC_V2, data: payload }.serialize(serializer)
    }
}

/// A message's LangChain kwargs map, whatever the format.
struct Kwargs<'a>(&'a Message);

impl Serialize for Kwargs<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let data = self.0.data();
        let specific = match data.kind {
            MessageType::Ai | MessageType::Tool => 3,
            _ => 0,
        };
        let len = BASE_KEYS + specific + data.extra.len();
        let mut map = serializer.serialize_map(Some(len))?;
        map.serialize_entry("content", &data.content)?;
        map.serialize_entry("additional_kwargs", &data.additional_kwargs)?;
        map.serialize_entry("response_metadata", &data.response_metadata)?;
        map.serialize_entry("type", data.kind.as_str())?;
        map.serialize_entry("name", &data.name)?;
        map.serialize_entry("id", &data.id)?;
        match data.kind {
            MessageType::Ai => {
                map.serialize_entry("tool_calls", &data.tool_calls)?;
                map.serialize_entry("invalid_tool_calls", &data.invalid_tool_calls)?;
                map.serialize_entry("usage_metadata", &data.usage_metadata)?;
            }
            MessageType::Tool => {
                map.serialize_entry("tool_call_id", &data.tool_call_id)?;
                map.serialize_entry("artifact", &data.artifact)?;
                map.serialize_entry("status", data.status.as_str())?;
            }
            _ => {}
        }
        for (key, value) in &data.extra {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Message {
    /// Reads a LangChain kwargs map whose `type` (or, failing that, `role`) names the
    /// kind; `user`, `assistant` and `developer` are accepted like LangChain does.
    /// Missing keys and `null`s take LangChain's defaults; unknown keys are kept.
    ///
    /// Like LangChain's `convert_to_messages`, a bare string reads as a human message
    /// and a `[role, content]` pair as a message of that role.
    ///
    /// From rmp-serde it also reads LangGraph's ext 5 form.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MessageVisitor)
    }
}

/// Accepts every form a message may take on input; see `Message`'s `Deserialize`.
struct MessageVisitor;

impl<'de> Visitor<'de> for MessageVisitor {
    type Value = Message;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message map, a string or a `[role, content]` pair")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Message, E> {
        Ok(Message::human(text))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Message, E> {
        Ok(Message::human(text))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Message, A::Error> {
        let map = Map::deserialize(MapAccessDeserializer::new(map))?;
        parse(map, None).map(Message::from_data)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Message, A::Error> {
        let items = Vec::<Value>::deserialize(SeqAccessDeserializer::new(seq))?;
        let [role, content]: [Value; 2] = items
            .try_into()
            .map_err(|_| de::Error::custom("invalid message: expected a `[role, content]` pair"))?;
        let mut map = Map::new();
        map.insert("role".to_owned(), role);
        map.insert("content".to_owned(), content);
        parse(map, None).map(Message::from_data)
    }

    /// rmp-serde presents a msgpack ext value as its `_ExtStruct` newtype.
    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Message, D::Error> {
        let (code, data) = deserialize_ext(deserializer)?;
        message_from_ext(code, data).map_err(de::Error::custom)
    }
}

impl Message {
    /// Builds a message of a known kind from a LangChain kwargs map, as decoded from
    /// LangGraph's msgpack ext 5 where the class, not the map, names the kind.
    ///
    /// A `type` key in `kwargs` is ignored. Missing keys and `null`s take LangChain's
    /// defaults, so `{"content": "hi", "id": "h1"}` is a valid `HumanMessage`.
    ///
    /// # Errors
    ///
    /// When a known key has the wrong shape, e.g. `content` is a number.
    ///
    /// # Example
    ///
    /// ```
    /// # use mnemograph_checkpoint::messages::{Message, MessageType};
    /// let kwargs = serde_json::json!({"content": "r", "tool_call_id": "c1", "id": "t1"});
    /// let Some(map) = kwargs.as_object().cloned() else { unreachable!() };
    /// let msg = Message::from_kwargs(MessageType::Tool, map)?;
    /// assert_eq!(msg.tool_call_id(), Some("c1"));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn from_kwargs(kind: MessageType, kwargs: Map<String, Value>) -> Result<Self, serde_json::Error> {
        parse(kwargs, Some(kind)).map(Self::from_data)
    }
}

/// Turns a kwargs map into message data; `kind` overrides the map's `type`/`role`.
fn parse<E: de::Error>(mut map: Map<String, Value>, kind: Option<MessageType>) -> Result<MessageData, E> {
    let (kind, developer) = match kind {
        Some(kind) => {
            map.remove("type");
            (kind, false)
        }
        None => kind_from_map(&mut map)?,
    };

    let content = match map.remove("content") {
        Some(value) => Content::from_value(value).map_err(E::custom)?,
        None => Content::default(),
    };
    let mut data = MessageData::new(kind, content);
    data.additional_kwargs = take_object(&mut map, "additional_kwargs")?;
    data.response_metadata = take_object(&mut map, "response_metadata")?;
    data.name = take_string(&mut map, "name")?;
    data.id = take_id(&mut map, "id")?;
    if developer && !data.additional_kwargs.contains_key(OPENAI_ROLE_KEY) {
        data.additional_kwargs.insert(OPENAI_ROLE_KEY.to_owned(), "developer".into());
    }

    match kind {
        MessageType::Ai => {
            data.tool_calls = take_typed(&mut map, "tool_calls")?.unwrap_or_default();
            data.invalid_tool_calls = take_typed(&mut map, "invalid_tool_calls")?.unwrap_or_default();
            data.usage_metadata = take_typed(&mut map, "usage_metadata")?;
        }
        MessageType::Tool => {
            data.tool_call_id = take_id(&mut map, "tool_call_id")?;
            data.artifact = map.remove("artifact").unwrap_or(Value::Null);
            data.status = take_typed::<ToolStatus, E>(&mut map, "status")?.unwrap_or_default();
        }
        _ => {}
    }
    // Whatever is left is data this crate does not model (e.g. `example` from older
    // LangChain dumps); it is written back so nothing is lost.
    data.extra = map;
    Ok(data)
}

/// Reads the kind from `type`, falling back to `role` (OpenAI-style dicts), and
/// removes the key it used. Also reports whether the name was `developer`.
fn kind_from_map<E: de::Error>(map: &mut Map<String, Value>) -> Result<(MessageType, bool), E> {
    let key = if map.get("type").is_some_and(|v| !v.is_null()) {
        "type"
    } else if map.get("role").is_some_and(|v| !v.is_null()) {
        "role"
    } else {
        return Err(E::custom("missing message type: expected a `type` or `role` key"));
    };
    let Some(Value::String(name)) = map.remove(key) else {
        return Err(E::custom(format_args!("invalid message `{key}`: expected a string")));
    };
    let kind =
        MessageType::parse(&name).ok_or_else(|| E::custom(format_args!("unknown message type `{name}`")))?;
    Ok((kind, name == "developer"))
}

/// Removes an object-valued key; missing or `null` is an empty map.
fn take_object<E: de::Error>(map: &mut Map<String, Value>, key: &str) -> Result<Map<String, Value>, E> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(object)) => Ok(object),
        Some(_) => Err(E::custom(format_args!("invalid `{key}`: expected an object"))),
    }
}

/// Removes an optional string key.
fn take_string<E: de::Error>(map: &mut Map<String, Value>, key: &str) -> Result<Option<String>, E> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(E::custom(format_args!("invalid `{key}`: expected a string"))),
    }
}

/// Removes an optional id; numbers become strings, as LangChain coerces them.
fn take_id<E: de::Error>(map: &mut Map<String, Value>, key: &str) -> Result<Option<String>, E> {
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(Value::Number(number)) => Ok(Some(number.to_string())),
        Some(_) => Err(E::custom(format_args!("invalid `{key}`: expected a string"))),
    }
}

/// Removes a key and decodes it as `T`; missing or `null` is `None`.
fn take_typed<T, E>(map: &mut Map<String, Value>, key: &str) -> Result<Option<T>, E>
where
    T: for<'de> Deserialize<'de>,
    E: de::Error,
{
    match map.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(|err| E::custom(format_args!("invalid `{key}`: {err}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::{Content, ToolCall, UsageMetadata};
    use serde_json::json;

    /// Serializes to a JSON string, which keeps the serializer's key order.
    fn to_json(msg: &Message) -> String {
        serde_json::to_string(msg).unwrap()
    }

    fn round_trip(msg: &Message) -> Message {
        serde_json::from_str(&to_json(msg)).unwrap()
    }

    #[test]
    fn human_uses_langchain_key_order() {
        let msg = Message::human("hi").with_id("h1");
        assert_eq!(
            to_json(&msg),
            r#"{"content":"hi","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"h1"}"#
        );
        assert_eq!(round_trip(&msg), msg);
    }

    #[test]
    fn system_and_remove_forms() {
        let system = Message::system("你是一个有帮助的助手").with_name("setup");
        assert_eq!(
            to_json(&system),
            r#"{"content":"你是一个有帮助的助手","additional_kwargs":{},"response_metadata":{},"type":"system","name":"setup","id":null}"#
        );
        assert_eq!(round_trip(&system), system);
        let remove = Message::remove_all();
        assert_eq!(
            to_json(&remove),
            r#"{"content":"","additional_kwargs":{},"response_metadata":{},"type":"remove","name":null,"id":"__remove_all__"}"#
        );
        assert!(round_trip(&remove).is_remove_all());
    }

    #[test]
    fn ai_with_tool_calls_usage_and_reasoning_round_trips() {
        let mut kwargs = Map::new();
        kwargs.insert("reasoning_content".to_owned(), json!("先想一想……"));
        let mut meta = Map::new();
        meta.insert("model_name".to_owned(), json!("deepseek-reasoner"));
        let mut usage = UsageMetadata::new(12, 30);
        usage.extra.insert("output_token_details".to_owned(), json!({"reasoning": 20}));
        let msg = Message::ai("北京今天晴。")
            .with_id("a1")
            .with_tool_calls(vec![ToolCall::new("weather", json!({"city": "北京"}), "c1")])
            .with_usage(usage)
            .with_additional_kwargs(kwargs)
            .with_response_metadata(meta);
        assert_eq!(
            to_json(&msg),
            concat!(
                r#"{"content":"北京今天晴。","additional_kwargs":{"reasoning_content":"先想一想……"},"#,
                r#""response_metadata":{"model_name":"deepseek-reasoner"},"type":"ai","name":null,"#,
                r#""id":"a1","tool_calls":[{"name":"weather","args":{"city":"北京"},"id":"c1","#,
                r#""type":"tool_call"}],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":12,"#,
                r#""output_tokens":30,"total_tokens":42,"output_token_details":{"reasoning":20}}}"#,
            )
        );
        let back = round_trip(&msg);
        assert_eq!(back, msg);
        assert_eq!(back.additional_kwargs()["reasoning_content"], json!("先想一想……"));
    }

    #[test]
    fn ai_without_usage_writes_null() {
        let text = to_json(&Message::ai("x"));
        assert!(
            text.ends_with(r#""tool_calls":[],"invalid_tool_calls":[],"usage_metadata":null}"#),
            "{text}"
        );
    }

    #[test]
    fn tool_message_round_trips() {
        // Keys in sorted order, so the test holds with or without serde_json's
        // `preserve_order` feature.
        let msg = Message::tool(vec![json!({"text": "结果", "type": "text"})], "c1")
            .with_id("t1")
            .with_status(ToolStatus::Error)
            .with_artifact(json!({"raw": [1, 2]}));
        assert_eq!(
            to_json(&msg),
            concat!(
                r#"{"content":[{"text":"结果","type":"text"}],"additional_kwargs":{},"#,
                r#""response_metadata":{},"type":"tool","name":null,"id":"t1","#,
                r#""tool_call_id":"c1","artifact":{"raw":[1,2]},"status":"error"}"#,
            )
        );
        assert_eq!(round_trip(&msg), msg);
        assert_eq!(round_trip(&msg).text(), "结果");
    }

    #[test]
    fn minimal_maps_and_nulls_take_defaults() {
        let msg: Message = serde_json::from_str(r#"{"type":"human","content":"hi"}"#).unwrap();
        assert_eq!(msg, Message::human("hi"));
        let msg: Message = serde_json::from_value(json!({
            "type": "ai", "content": null, "additional_kwargs": null, "name": null,
            "tool_calls": null, "invalid_tool_calls": null, "usage_metadata": null,
        }))
        .unwrap();
        assert_eq!(msg, Message::ai(""));
        let msg: Message = serde_json::from_value(json!({"type": "tool", "content": "r"})).unwrap();
        assert_eq!((msg.tool_call_id(), msg.status()), (None, Some(ToolStatus::Success)));
        let msg: Message = serde_json::from_value(json!({
            "type": "ai", "tool_calls": [{"name": "t", "args": {"q": 1}, "id": "c1"}],
        }))
        .unwrap();
        assert_eq!(msg.tool_calls(), &[ToolCall::new("t", json!({"q": 1}), "c1")]);
        assert_eq!(msg.content(), &Content::default());
    }

    #[test]
    fn role_aliases() {
        let cases = [
            (json!({"role": "user", "content": "a"}), Message::human("a")),
            (json!({"role": "assistant", "content": "b"}), Message::ai("b")),
            (json!({"type": "user", "content": "c"}), Message::human("c")),
            (json!({"type": "assistant", "content": "d"}), Message::ai("d")),
            (json!({"role": "system", "content": "e"}), Message::system("e")),
            (json!({"role": "tool", "content": "f", "tool_call_id": "c1"}), Message::tool("f", "c1")),
            (json!({"type": "AIMessageChunk", "content": "g"}), Message::ai("g")),
        ];
        for (input, expected) in cases {
            assert_eq!(serde_json::from_value::<Message>(input).unwrap(), expected);
        }
        let dev: Message = serde_json::from_value(json!({"role": "developer", "content": "x"})).unwrap();
        assert_eq!(dev.kind(), MessageType::System);
        assert_eq!(dev.additional_kwargs()[OPENAI_ROLE_KEY], json!("developer"));
    }

    #[test]
    fn strings_and_role_pairs_are_coerced() {
        let msgs: Vec<Message> =
            serde_json::from_value(json!(["hi", ["user", "meow"], ["ai", [{"type": "text", "text": "x"}]]]))
                .unwrap();
        assert_eq!(msgs[0], Message::human("hi"));
        assert_eq!(msgs[1], Message::human("meow"));
        assert_eq!((msgs[2].kind(), msgs[2].text()), (MessageType::Ai, "x".to_owned()));
        for bad in [json!(1), json!(["user"]), json!([1, "x"])] {
            assert!(serde_json::from_value::<Message>(bad).is_err());
        }
    }

    #[test]
    fn unknown_keys_are_kept_and_written_last() {
        let input = r#"{"content":"hi","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"h1","example":false,"zz_custom":{"k":[1,"二"]}}"#;
        let msg: Message = serde_json::from_str(input).unwrap();
        assert_eq!(msg.extra()["example"], json!(false));
        assert_eq!(to_json(&msg), input);
        // A key that only another kind models is unknown to this one.
        let human: Message =
            serde_json::from_value(json!({"type": "human", "content": "", "tool_calls": []})).unwrap();
        assert!(human.tool_calls().is_empty());
        assert_eq!(human.extra()["tool_calls"], json!([]));
    }

    #[test]
    fn numeric_ids_are_coerced_to_strings() {
        let msg: Message =
            serde_json::from_value(json!({"type": "tool", "content": "", "id": 7, "tool_call_id": 42}))
                .unwrap();
        assert_eq!((msg.id(), msg.tool_call_id()), (Some("7"), Some("42")));
    }

    #[test]
    fn malformed_input_is_rejected() {
        let cases = [
            (json!({"content": "x"}), "missing message type"),
            (json!({"type": "function", "content": "x"}), "unknown message type `function`"),
            (json!({"type": 3}), "invalid message `type`"),
            (json!({"type": "human", "content": 3}), "invalid message content"),
            (json!({"type": "human", "additional_kwargs": []}), "invalid `additional_kwargs`"),
            (json!({"type": "human", "name": 1}), "invalid `name`"),
            (json!({"type": "tool", "status": "done"}), "invalid `status`"),
            (json!({"type": "ai", "tool_calls": {}}), "invalid `tool_calls`"),
        ];
        for (input, expected) in cases {
            let err = serde_json::from_value::<Message>(input).unwrap_err().to_string();
            assert!(err.contains(expected), "{err:?} should contain {expected:?}");
        }
    }

    #[test]
    fn from_kwargs_uses_the_class_kind() {
        let Value::Object(map) = json!({"content": "hi", "id": "h1", "type": "ai"}) else { unreachable!() };
        let msg = Message::from_kwargs(MessageType::Human, map).unwrap();
        assert_eq!(msg, Message::human("hi").with_id("h1"));
        assert!(msg.extra().is_empty());
    }

    #[test]
    fn vec_of_messages_round_trips() {
        let history = vec![
            Message::system("s").with_id("1"),
            Message::human("你好").with_id("2"),
            Message::ai("").with_id("3").with_tool_calls(vec![ToolCall::new("t", json!({}), "c")]),
            Message::tool("ok", "c").with_id("4"),
        ];
        let text = serde_json::to_string(&history).unwrap();
        assert_eq!(serde_json::from_str::<Vec<Message>>(&text).unwrap(), history);
    }
}
