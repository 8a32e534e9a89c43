//! The OpenAI chat-completions wire format: messages and requests out, replies and stream
//! chunks in. Bodies are plain JSON rather than async-openai's typed structs so that provider
//! extras (`reasoning_content`, vLLM's `reasoning`, ...) survive instead of being dropped by a
//! strict schema.

use mnemograph_core::messages::{Content, InvalidToolCall, Message, MessageType, ToolCall, UsageMetadata};
use serde_json::{json, Map, Value};

use super::config::OpenAiConfig;
use crate::error::{Error, Result};
use crate::model::{ChatChunk, ChatRequest, ToolCallChunk};

/// Keys of a reply message or delta that have typed homes; every other non-null key is a
/// provider extra and goes to `additional_kwargs`.
const KNOWN_MESSAGE_KEYS: [&str; 3] = ["role", "content", "tool_calls"];

/// The request body.
pub(super) fn request_body(config: &OpenAiConfig, request: &ChatRequest, stream: bool) -> Value {
    let messages: Vec<Value> =
        request.messages.iter().filter_map(|m| message_to_openai(m, config.send_reasoning_content)).collect();
    let mut body = Map::new();
    body.insert("model".into(), Value::from(config.model.as_str()));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), Value::Bool(stream));
    if stream && config.stream_usage {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if !request.tools.is_empty() {
        body.insert("tools".into(), request.tools.iter().map(|t| t.to_openai()).collect());
    }
    if let Some(choice) = &request.tool_choice {
        body.insert("tool_choice".into(), choice.to_value());
    }
    if let Some(t) = request.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(n) = request.max_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    if !request.stop.is_empty() {
        body.insert("stop".into(), json!(request.stop));
    }
    // Config-wide extras first, so a request's own extras win.
    for (k, v) in config.extra_body.iter().chain(&request.extra) {
        body.insert(k.clone(), v.clone());
    }
    Value::Object(body)
}

/// One message in OpenAI's form; `None` for remove markers, which are not chat messages.
pub(super) fn message_to_openai(message: &Message, send_reasoning: bool) -> Option<Value> {
    let role = match message.kind() {
        MessageType::System => "system",
        MessageType::Human => "user",
        MessageType::Ai => "assistant",
        MessageType::Tool => "tool",
        _ => return None,
    };
    let mut out = Map::new();
    out.insert("role".into(), Value::from(role));
    let has_calls = !message.tool_calls().is_empty() || !message.invalid_tool_calls().is_empty();
    let content = match message.content() {
        // OpenAI wants `null`, not "", beside tool calls; some compatible servers reject "".
        c if c.is_empty() && has_calls => Value::Null,
        Content::Text(text) => Value::from(text.as_str()),
        Content::Blocks(blocks) => Value::Array(blocks.clone()),
        _ => Value::from(message.text()),
    };
    out.insert("content".into(), content);
    if let Some(name) = message.name().filter(|_| role != "tool") {
        out.insert("name".into(), Value::from(name));
    }
    if has_calls {
        let valid = message
            .tool_calls()
            .iter()
            .map(|c| call_to_openai(c.id.as_deref(), &c.name, &c.args.to_string()));
        // Unparsable calls are sent back as they came: the ToolNode answered them with an
        // error, and a ToolMessage whose call is missing is rejected by the provider.
        let invalid = message.invalid_tool_calls().iter().map(|c| {
            call_to_openai(c.id.as_deref(), c.name.as_deref().unwrap_or(""), c.args.as_deref().unwrap_or(""))
        });
        out.insert("tool_calls".into(), valid.chain(invalid).collect());
    }
    if send_reasoning {
        if let Some(r) = message.additional_kwargs().get("reasoning_content") {
            out.insert("reasoning_content".into(), r.clone());
        }
    }
    if let Some(id) = message.tool_call_id() {
        out.insert("tool_call_id".into(), Value::from(id));
    }
    Some(Value::Object(out))
}

/// One `tool_calls[]` entry.
fn call_to_openai(id: Option<&str>, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// A non-streamed reply.
pub(super) fn parse_response(mut body: Value) -> Result<Message> {
    let mut choice = match body.get_mut("choices").and_then(Value::as_array_mut) {
        Some(choices) if !choices.is_empty() => choices.swap_remove(0),
        _ => return Err(Error::MissingField("choices")),
    };
    let Some(Value::Object(raw)) = choice.get_mut("message").map(Value::take) else {
        return Err(Error::MissingField("choices[0].message"));
    };
    let content = content_from_json(raw.get("content").cloned().unwrap_or(Value::Null));
    let mut valid = Vec::new();
    let mut invalid = Vec::new();
    for call in raw.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
        let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
        let f = call.get("function").unwrap_or(&Value::Null);
        let name = f.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        let args = f.get("arguments").and_then(Value::as_str).unwrap_or_default();
        match parse_args(args) {
            Ok(parsed) => valid.push(ToolCall { name, args: parsed, id }),
            Err(error) => invalid.push(InvalidToolCall {
                name: Some(name),
                args: Some(args.to_owned()),
                id,
                error: Some(error),
            }),
        }
    }
    let mut metadata = Map::new();
    if let Some(usage) = body.get("usage").filter(|u| !u.is_null()) {
        metadata.insert("token_usage".into(), usage.clone());
    }
    copy_metadata(&body, &mut metadata);
    if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
        metadata.insert("finish_reason".into(), reason.clone());
    }
    let mut message = Message::ai(content)
        .with_tool_calls(valid)
        .with_invalid_tool_calls(invalid)
        .with_additional_kwargs(extras(raw))
        .with_response_metadata(metadata);
    if let Some(id) = body.get("id").and_then(Value::as_str) {
        message = message.with_id(id);
    }
    if let Some(usage) = body.get("usage").and_then(parse_usage) {
        message = message.with_usage(usage);
    }
    Ok(message)
}

/// One streamed chunk.
pub(super) fn parse_chunk(body: &Value) -> Result<ChatChunk> {
    if let Some(error) = body.get("error") {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("unknown error").to_owned();
        let code = error
            .get("code")
            .filter(|c| !c.is_null())
            .map(|c| c.as_str().map_or(c.to_string(), str::to_owned));
        return Err(Error::StreamEvent { message, code });
    }
    let mut chunk =
        ChatChunk { id: body.get("id").and_then(Value::as_str).map(str::to_owned), ..ChatChunk::default() };
    copy_metadata(body, &mut chunk.response_metadata);
    if let Some(usage) = body.get("usage").filter(|u| !u.is_null()) {
        // As in `parse_response`, so a streamed reply equals the same reply invoked.
        chunk.response_metadata.insert("token_usage".into(), usage.clone());
        chunk.usage = parse_usage(usage);
    }
    let Some(choice) = body.get("choices").and_then(Value::as_array).and_then(|c| c.first()) else {
        // The usage-only chunk that ends an `include_usage` stream has no choices.
        return Ok(chunk);
    };
    if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
        chunk.response_metadata.insert("finish_reason".into(), reason.clone());
    }
    let Some(Value::Object(delta)) = choice.get("delta") else { return Ok(chunk) };
    if let Some(text) = delta.get("content").and_then(Value::as_str) {
        chunk.content = text.to_owned();
    }
    for (position, call) in
        delta.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate()
    {
        // Ollama has omitted `index` on whole (unsplit) calls; their position then identifies them.
        let index = call.get("index").and_then(Value::as_u64).map_or(position, |i| i as usize);
        let f = call.get("function").unwrap_or(&Value::Null);
        chunk.tool_calls.push(ToolCallChunk {
            index,
            id: call.get("id").and_then(Value::as_str).map(str::to_owned),
            name: f.get("name").and_then(Value::as_str).map(str::to_owned),
            args: f.get("arguments").and_then(Value::as_str).unwrap_or_default().to_owned(),
        });
    }
    chunk.additional_kwargs = extras(delta.clone());
    Ok(chunk)
}

/// Argument text as a JSON object; `""` means no arguments.
fn parse_args(text: &str) -> std::result::Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(format!("arguments must be a JSON object, got {other}")),
        Err(e) => Err(e.to_string()),
    }
}

/// Provider extras of a message or delta: every non-null key without a typed home.
fn extras(mut raw: Map<String, Value>) -> Map<String, Value> {
    raw.retain(|k, v| !v.is_null() && !KNOWN_MESSAGE_KEYS.contains(&k.as_str()));
    raw
}

/// Response-level facts LangChain keeps in `response_metadata`.
fn copy_metadata(body: &Value, into: &mut Map<String, Value>) {
    for (from, to) in [("model", "model_name"), ("system_fingerprint", "system_fingerprint"), ("id", "id")] {
        if let Some(v) = body.get(from).filter(|v| !v.is_null()) {
            into.insert(to.into(), v.clone());
        }
    }
}

/// OpenAI `usage` as LangChain's `UsageMetadata`, cache and reasoning details included.
fn parse_usage(usage: &Value) -> Option<UsageMetadata> {
    let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
    let input = n(usage, "prompt_tokens")?;
    let output = n(usage, "completion_tokens").unwrap_or(0);
    let mut meta = UsageMetadata::new(input, output);
    if let Some(total) = n(usage, "total_tokens") {
        meta.total_tokens = total;
    }
    if let Some(cached) = usage.get("prompt_tokens_details").and_then(|d| n(d, "cached_tokens")) {
        meta.extra.insert("input_token_details".into(), json!({"cache_read": cached}));
    }
    if let Some(reasoning) = usage.get("completion_tokens_details").and_then(|d| n(d, "reasoning_tokens")) {
        meta.extra.insert("output_token_details".into(), json!({"reasoning": reasoning}));
    }
    Some(meta)
}

/// Reads OpenAI `content` (string, `null` or parts list) into [`Content`].
fn content_from_json(value: Value) -> Content {
    match value {
        Value::String(text) => Content::Text(text),
        Value::Array(blocks) => Content::Blocks(blocks),
        _ => Content::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::ToolSpec;

    #[test]
    fn request_body_shapes_messages_and_tools() {
        let config = OpenAiConfig::new("m").with_base_url("http://x");
        let history = vec![
            Message::system("be brief"),
            Message::human("weather?").with_name("ann"),
            Message::ai("").with_tool_calls(vec![ToolCall::new("w", json!({"c": "巴黎"}), "c1")]),
            Message::tool("sunny", "c1"),
            Message::remove("zz"),
        ];
        let request = ChatRequest::new(history)
            .with_tools(vec![ToolSpec::new("w", "weather", json!({"type": "object"}))])
            .with_extra("enable_thinking", json!(false));
        let body = request_body(&config, &request, true);
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 4);
        assert_eq!(msgs[1], json!({"role": "user", "content": "weather?", "name": "ann"}));
        assert_eq!(msgs[2]["content"], Value::Null);
        assert_eq!(msgs[2]["tool_calls"][0]["function"]["arguments"], r#"{"c":"巴黎"}"#);
        assert_eq!(msgs[3], json!({"role": "tool", "content": "sunny", "tool_call_id": "c1"}));
        assert_eq!(body["tools"][0]["function"]["name"], "w");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["enable_thinking"], false);
    }

    #[test]
    fn response_keeps_reasoning_and_usage_details() {
        let body = json!({
            "id": "chatcmpl-1", "model": "deepseek-reasoner",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "reasoning_content": "用户想知道天气",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{\"c\":\"x\"}"}},
                    {"id": "c2", "type": "function", "function": {"name": "w", "arguments": "{bad"}}
                ]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                      "completion_tokens_details": {"reasoning_tokens": 3}}
        });
        let m = parse_response(body).unwrap();
        assert_eq!(m.id(), Some("chatcmpl-1"));
        assert_eq!(m.additional_kwargs()["reasoning_content"], "用户想知道天气");
        assert_eq!(m.tool_calls()[0].args, json!({"c": "x"}));
        assert_eq!(m.invalid_tool_calls()[0].id.as_deref(), Some("c2"));
        assert_eq!(m.response_metadata()["finish_reason"], "tool_calls");
        assert_eq!(m.response_metadata()["model_name"], "deepseek-reasoner");
        let usage = m.usage().unwrap();
        assert_eq!((usage.input_tokens, usage.total_tokens), (10, 15));
        assert_eq!(usage.extra["output_token_details"]["reasoning"], 3);
        assert!(matches!(parse_response(json!({"choices": []})), Err(Error::MissingField("choices"))));
    }

    #[test]
    fn chunks_carry_deltas_and_errors() {
        let c =
            parse_chunk(&json!({"id": "x", "choices": [{"index": 0, "delta": {"reasoning_content": "hm"}}]}))
                .unwrap();
        assert_eq!(c.additional_kwargs["reasoning_content"], "hm");
        let c = parse_chunk(
            &json!({"id": "x", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}}),
        )
        .unwrap();
        assert_eq!(c.usage.unwrap().total_tokens, 3);
        let err = parse_chunk(&json!({"error": {"message": "overloaded", "code": 503}})).unwrap_err();
        assert!(matches!(err, Error::StreamEvent { code: Some(c), .. } if c == "503"));
    }
}
