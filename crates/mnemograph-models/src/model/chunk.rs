//! Streaming pieces of a reply ([`ChatChunk`]) and their assembly into one AI message
//! ([`ChunkAggregator`]).

use std::collections::BTreeMap;

use mnemograph_core::messages::{InvalidToolCall, Message, ToolCall, UsageMetadata};
use serde_json::{Map, Value};

/// A fragment of a tool call as a provider streams it: the first fragment of a call carries its
/// `id` and `name`, later ones only pieces of the JSON `args` text. Fragments of one call share
/// an `index`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolCallChunk {
    /// Position of the call in the reply; the key fragments are grouped by.
    pub index: usize,
    /// Call id, usually only on the first fragment.
    pub id: Option<String>,
    /// Tool name, usually only on the first fragment.
    pub name: Option<String>,
    /// A piece of the arguments' JSON text.
    pub args: String,
}

impl ToolCallChunk {
    /// A fragment of call `index`.
    pub fn new(index: usize) -> Self {
        Self { index, ..Self::default() }
    }
    /// Sets the call id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }
    /// Sets the tool name.
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
    /// Sets the piece of argument text.
    #[must_use]
    pub fn with_args(mut self, args: impl Into<String>) -> Self {
        self.args = args.into();
        self
    }

    /// The LangChain `tool_call_chunk` dict, as carried by streamed message chunks.
    pub fn to_value(&self) -> Value {
        serde_json::json!({
            "name": self.name, "args": self.args, "id": self.id, "index": self.index, "type": "tool_call_chunk",
        })
    }
}

/// One streamed piece of an AI reply (LangChain's `AIMessageChunk`).
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ChatChunk {
    /// The reply's id (e.g. `chatcmpl-…`), repeated on every chunk by OpenAI-style providers.
    pub id: Option<String>,
    /// New text.
    pub content: String,
    /// New tool-call fragments.
    pub tool_calls: Vec<ToolCallChunk>,
    /// Provider extras; string values are deltas that concatenate (`reasoning_content`).
    pub additional_kwargs: Map<String, Value>,
    /// Response facts (`finish_reason`, `model_name`, ...); later values replace earlier ones.
    pub response_metadata: Map<String, Value>,
    /// Token usage, usually on the last chunk.
    pub usage: Option<UsageMetadata>,
}

impl ChatChunk {
    /// A chunk of text.
    pub fn text(content: impl Into<String>) -> Self {
        Self { content: content.into(), ..Self::default() }
    }

    /// A single chunk holding a whole message, for models that cannot stream.
    pub fn from_message(message: &Message) -> Self {
        let tool_calls = message
            .tool_calls()
            .iter()
            .enumerate()
            .map(|(index, call)| ToolCallChunk {
                index,
                id: call.id.clone(),
                name: Some(call.name.clone()),
                args: call.args.to_string(),
            })
            .collect();
        Self {
            id: message.id().map(str::to_owned),
            content: message.text(),
            tool_calls,
            additional_kwargs: message.additional_kwargs().clone(),
            response_metadata: message.response_metadata().clone(),
            usage: message.usage().cloned(),
        }
    }

    /// Whether the chunk says the reply is finished (`finish_reason` set).
    pub fn is_final(&self) -> bool {
        self.response_metadata.get("finish_reason").is_some_and(|v| !v.is_null())
    }

    /// The chunk as the AI message the graph's `messages` stream carries: the text delta, with
    /// tool-call fragments under `additional_kwargs["tool_call_chunks"]` (mnemograph-core's message has
    /// no chunk field) and the reply's id, so a consumer can group chunks by message.
    pub fn to_message(&self, id: &str) -> Message {
        let mut kwargs = self.additional_kwargs.clone();
        if !self.tool_calls.is_empty() {
            let chunks = self.tool_calls.iter().map(ToolCallChunk::to_value).collect();
            kwargs.insert("tool_call_chunks".to_owned(), Value::Array(chunks));
        }
        let mut message = Message::ai(self.content.as_str())
            .with_id(id)
            .with_additional_kwargs(kwargs)
            .with_response_metadata(self.response_metadata.clone());
        if let Some(usage) = &self.usage {
            message = message.with_usage(usage.clone());
        }
        message
    }
}

/// Fragments of one tool call gathered so far.
#[derive(Debug, Default)]
struct PartialCall {
    /// First id seen.
    id: Option<String>,
    /// First name seen.
    name: Option<String>,
    /// Concatenated argument text.
    args: String,
}

/// Folds [`ChatChunk`]s into the finished AI [`Message`], as LangChain's `chunk + chunk` does.
///
/// Text and string extras concatenate; tool-call fragments are grouped by `index` (so calls
/// streamed interleaved assemble correctly), their argument text is parsed once at the end, and
/// text that is not valid JSON becomes an [`InvalidToolCall`] instead of failing the reply.
///
/// ```
/// use mnemograph_models::{ChatChunk, ChunkAggregator, ToolCallChunk};
///
/// let mut agg = ChunkAggregator::new();
/// let mut first = ChatChunk::text("Let me check");
/// first.tool_calls.push(ToolCallChunk::new(0).with_id("c1").with_name("weather").with_args("{\"ci"));
/// agg.push(&first);
/// let mut second = ChatChunk::default();
/// second.tool_calls.push(ToolCallChunk::new(0).with_args("ty\": \"Paris\"}"));
/// agg.push(&second);
/// let message = agg.finish();
/// assert_eq!(message.text(), "Let me check");
/// assert_eq!(message.tool_calls()[0].args["city"], "Paris");
/// ```
#[derive(Debug, Default)]
pub struct ChunkAggregator {
    /// The reply id, from the first chunk that has one.
    id: Option<String>,
    /// Concatenated text.
    content: String,
    /// Calls by index; a `BTreeMap` so calls come out in index order.
    calls: BTreeMap<usize, PartialCall>,
    /// Merged extras.
    additional_kwargs: Map<String, Value>,
    /// Merged metadata.
    response_metadata: Map<String, Value>,
    /// Latest usage.
    usage: Option<UsageMetadata>,
    /// Whether a chunk carried a `finish_reason`.
    finished: bool,
}

impl ChunkAggregator {
    /// An empty aggregate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a chunk.
    pub fn push(&mut self, chunk: &ChatChunk) {
        if self.id.is_none() {
            self.id.clone_from(&chunk.id);
        }
        self.content.push_str(&chunk.content);
        for piece in &chunk.tool_calls {
            let call = self.calls.entry(piece.index).or_default();
            // Ids and names arrive whole on the first fragment; some providers repeat them on
            // every fragment, so the first one wins instead of concatenating.
            if call.id.is_none() {
                call.id.clone_from(&piece.id);
            }
            if call.name.is_none() {
                call.name.clone_from(&piece.name);
            }
            call.args.push_str(&piece.args);
        }
        for (key, value) in &chunk.additional_kwargs {
            match (self.additional_kwargs.get_mut(key), value) {
                (Some(Value::String(acc)), Value::String(more)) => acc.push_str(more),
                _ => {
                    self.additional_kwargs.insert(key.clone(), value.clone());
                }
            }
        }
        for (key, value) in &chunk.response_metadata {
            self.response_metadata.insert(key.clone(), value.clone());
        }
        if chunk.usage.is_some() {
            // Providers send usage once at the end, or cumulatively on every chunk; in both
            // cases the latest report is the total.
            self.usage.clone_from(&chunk.usage);
        }
        self.finished |= chunk.is_final();
    }

    /// Whether some chunk carried a `finish_reason`.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The reply id seen so far.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The assembled message.
    pub fn finish(self) -> Message {
        let mut valid = Vec::new();
        let mut invalid = Vec::new();
        for call in self.calls.into_values() {
            let name = call.name.unwrap_or_default();
            // An empty argument string means "no arguments" (OpenAI sends "" for no-arg tools).
            let text = if call.args.trim().is_empty() { "{}" } else { call.args.as_str() };
            match serde_json::from_str::<Value>(text) {
                Ok(args @ Value::Object(_)) => valid.push(ToolCall { name, args, id: call.id }),
                Ok(other) => invalid.push(InvalidToolCall {
                    name: Some(name),
                    args: Some(call.args),
                    id: call.id,
                    error: Some(format!("arguments must be a JSON object, got {other}")),
                }),
                Err(e) => invalid.push(InvalidToolCall {
                    name: Some(name),
                    args: Some(call.args),
                    id: call.id,
                    error: Some(e.to_string()),
                }),
            }
        }
        let mut message = Message::ai(self.content)
            .with_tool_calls(valid)
            .with_invalid_tool_calls(invalid)
            .with_additional_kwargs(self.additional_kwargs)
            .with_response_metadata(self.response_metadata);
        if let Some(id) = self.id {
            message = message.with_id(id);
        }
        if let Some(usage) = self.usage {
            message = message.with_usage(usage);
        }
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call_piece(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> ChatChunk {
        let mut piece = ToolCallChunk::new(index).with_args(args);
        piece.id = id.map(str::to_owned);
        piece.name = name.map(str::to_owned);
        ChatChunk { tool_calls: vec![piece], ..ChatChunk::default() }
    }

    #[test]
    fn interleaved_tool_calls_assemble_by_index() {
        let mut agg = ChunkAggregator::new();
        agg.push(&call_piece(1, Some("b"), Some("time"), "{\"tz\":"));
        agg.push(&call_piece(0, Some("a"), Some("weather"), "{\"city\""));
        agg.push(&call_piece(1, None, None, "\"UTC\"}"));
        agg.push(&call_piece(0, None, None, ":\"Paris\"}"));
        let message = agg.finish();
        let calls = message.tool_calls();
        assert_eq!(calls.len(), 2);
        assert_eq!((calls[0].name.as_str(), calls[0].id.as_deref()), ("weather", Some("a")));
        assert_eq!(calls[0].args, json!({"city": "Paris"}));
        assert_eq!(calls[1].args, json!({"tz": "UTC"}));
    }

    #[test]
    fn bad_json_becomes_invalid_tool_call_and_empty_args_are_empty_object() {
        let mut agg = ChunkAggregator::new();
        agg.push(&call_piece(0, Some("a"), Some("broken"), "{\"x\": "));
        agg.push(&call_piece(1, Some("b"), Some("noargs"), ""));
        let message = agg.finish();
        assert_eq!(message.tool_calls().len(), 1);
        assert_eq!(message.tool_calls()[0].args, json!({}));
        assert_eq!(message.invalid_tool_calls()[0].name.as_deref(), Some("broken"));
    }

    #[test]
    fn string_extras_concatenate_and_metadata_replaces() {
        let mut agg = ChunkAggregator::new();
        let mut a = ChatChunk::text("He");
        a.id = Some("chatcmpl-1".to_owned());
        a.additional_kwargs.insert("reasoning_content".to_owned(), json!("think"));
        let mut b = ChatChunk::text("llo");
        b.additional_kwargs.insert("reasoning_content".to_owned(), json!("ing"));
        b.response_metadata.insert("finish_reason".to_owned(), json!("stop"));
        b.usage = Some(UsageMetadata::new(3, 2));
        agg.push(&a);
        assert!(!agg.is_finished());
        agg.push(&b);
        assert!(agg.is_finished());
        let message = agg.finish();
        assert_eq!(message.text(), "Hello");
        assert_eq!(message.id(), Some("chatcmpl-1"));
        assert_eq!(message.additional_kwargs()["reasoning_content"], "thinking");
        assert_eq!(message.usage().unwrap().total_tokens, 5);
    }

    #[test]
    fn whole_message_round_trips_through_one_chunk() {
        let original =
            Message::ai("hi").with_id("m1").with_tool_calls(vec![ToolCall::new("t", json!({"a": 1}), "c1")]);
        let chunk = ChatChunk::from_message(&original);
        let mut agg = ChunkAggregator::new();
        agg.push(&chunk);
        let rebuilt = agg.finish();
        assert_eq!(rebuilt.text(), "hi");
        assert_eq!(rebuilt.tool_calls(), original.tool_calls());
        let streamed = chunk.to_message("m1");
        assert_eq!(streamed.additional_kwargs()["tool_call_chunks"][0]["name"], "t");
    }
}
