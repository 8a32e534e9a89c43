//! Every chat call is a `chat` span with OpenTelemetry's GenAI attributes, against a real HTTP
//! server speaking the protocol on loopback. Alone in its binary: `tracing` caches whether a
//! call site is enabled across threads, so a thread-scoped subscriber set while other tests run
//! may see nothing.

mod support;

use mnemograph_core::messages::Message;
use mnemograph_models::{collect_stream, ChatModel, ChatRequest, OpenAiChatModel, OpenAiConfig};
use serde_json::json;
use support::spans::Spans;
use support::{delta, Reply, Server};

fn model(server: &Server) -> OpenAiChatModel {
    let config = OpenAiConfig::new("test-model")
        .with_base_url(server.base_url())
        .with_api_key("sk-test")
        .with_max_retries(0);
    OpenAiChatModel::new(config).unwrap()
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::human(text)])
}

#[tokio::test]
async fn a_call_is_a_chat_span_with_genai_attributes() {
    let reply = json!({
        "id": "chatcmpl-9", "object": "chat.completion", "model": "test-model-0613",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "secret answer"}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    });
    let server = Server::start([
        Reply::Json(200, reply, vec![]),
        Reply::Sse(vec![
            delta(json!({"role": "assistant", "content": "part"}), None),
            delta(json!({}), Some("tool_calls")),
            json!({"id": "chatcmpl-text", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}}),
        ]),
        Reply::Json(401, json!({"error": {"message": "bad key", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}), vec![]),
    ])
    .await;
    let spans = Spans::default();
    let _guard = spans.install();
    let model = model(&server);
    model.invoke(ask("secret question")).await.unwrap();
    let stream = model.stream(ask("weather?")).await.unwrap();
    collect_stream(stream, |_, _| {}).await.unwrap();
    assert!(model.invoke(ask("again")).await.is_err());

    let chats = spans.named("chat");
    assert_eq!(chats.len(), 3, "{chats:?}");
    let field = |i: usize, key: &str| chats[i].get(key).cloned().unwrap_or_default();
    for (i, stream) in [(0, "false"), (1, "true"), (2, "false")] {
        assert_eq!(field(i, "gen_ai.operation.name"), "chat");
        assert_eq!(field(i, "gen_ai.system"), "openai");
        assert_eq!(field(i, "gen_ai.request.model"), "test-model");
        assert_eq!(field(i, "otel.name"), "chat test-model");
        assert_eq!(field(i, "gen_ai.request.stream"), stream);
    }
    assert_eq!(field(0, "gen_ai.response.model"), "test-model-0613");
    assert_eq!(field(0, "gen_ai.response.id"), "chatcmpl-9");
    assert_eq!(field(0, "gen_ai.response.finish_reasons"), "stop");
    assert_eq!(
        (field(0, "gen_ai.usage.input_tokens"), field(0, "gen_ai.usage.output_tokens")),
        ("12".into(), "3".into())
    );
    // The stream's usage arrives in its last chunk, its finish reason in the one before.
    assert_eq!(field(1, "gen_ai.response.finish_reasons"), "tool_calls");
    assert_eq!(
        (field(1, "gen_ai.usage.input_tokens"), field(1, "gen_ai.usage.output_tokens")),
        ("20".into(), "9".into())
    );
    assert_eq!(field(2, "error.type"), "401");
    assert!(chats.iter().all(|c| !c.contains_key("error.type") || c == &chats[2]));
    assert!(chats.iter().flat_map(|c| c.values()).all(|v| !v.contains("secret")), "no content: {chats:?}");
}
