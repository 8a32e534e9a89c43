//! The OpenAI-compatible client against a real HTTP server speaking the protocol on loopback.

mod support;

use futures_util::StreamExt;
use mnemograph_core::messages::{Message, MessagesState, MessagesStateUpdate, ToolCall};
use mnemograph_core::prelude::*;
use mnemograph_core::store::Embeddings;
use mnemograph_models::{
    collect_stream, ChatModel, ChatModelExt, ChatRequest, Error, OpenAiChatModel, OpenAiConfig,
    OpenAiEmbeddings, ToolSpec,
};
use serde_json::json;
use support::{delta, Reply, Server};

fn model(server: &Server, retries: usize) -> OpenAiChatModel {
    let config = OpenAiConfig::new("test-model")
        .with_base_url(server.base_url())
        .with_api_key("sk-test")
        .with_max_retries(retries);
    OpenAiChatModel::new(config).unwrap()
}

fn ask(text: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::system("be brief"), Message::human(text)])
}

fn api_error(status: u16, kind: &str, code: &str) -> Reply {
    let body =
        json!({"error": {"message": format!("{kind} happened"), "type": kind, "param": null, "code": code}});
    Reply::Json(status, body, vec![])
}

#[tokio::test]
async fn plain_completion_keeps_reasoning_and_usage() {
    let reply = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "deepseek-reasoner",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "四", "reasoning_content": "2+2=4"}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    });
    let server = Server::start([Reply::Json(200, reply, vec![])]).await;
    let message = model(&server, 0).invoke(ask("2+2?").with_temperature(0.0)).await.unwrap();
    assert_eq!(message.text(), "四");
    assert_eq!(message.id(), Some("chatcmpl-1"));
    assert_eq!(message.additional_kwargs()["reasoning_content"], "2+2=4");
    assert_eq!(message.usage().unwrap().total_tokens, 15);
    assert_eq!(message.response_metadata()["model_name"], "deepseek-reasoner");

    let seen = server.seen();
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(seen[0].body["model"], "test-model");
    assert_eq!(seen[0].body["stream"], false);
    assert_eq!(seen[0].body["temperature"], 0.0);
    assert_eq!(seen[0].body["messages"][1], json!({"role": "user", "content": "2+2?"}));
}

/// Two tool calls whose names, ids and argument text arrive in pieces, interleaved, with
/// reasoning deltas and a usage-only last chunk.
fn split_tool_call_events() -> Vec<serde_json::Value> {
    let call = |index: u64, id: Option<&str>, name: Option<&str>, args: &str| {
        let mut f = json!({"arguments": args});
        if let Some(name) = name {
            f["name"] = json!(name);
        }
        let mut c = json!({"index": index, "function": f});
        if let Some(id) = id {
            c["id"] = json!(id);
            c["type"] = json!("function");
        }
        delta(json!({"tool_calls": [c]}), None)
    };
    vec![
        delta(json!({"role": "assistant", "content": null, "reasoning_content": "需要查"}), None),
        delta(json!({"reasoning_content": "天气"}), None),
        delta(json!({"content": "Let me check."}), None),
        call(0, Some("call_a"), Some("weather"), ""),
        call(0, None, None, "{\"ci"),
        call(1, Some("call_b"), Some("time"), "{\"tz\": "),
        call(0, None, None, "ty\": \"巴"),
        call(1, None, None, "\"UTC\"}"),
        call(0, None, None, "黎\"}"),
        delta(json!({}), Some("tool_calls")),
        json!({"id": "chatcmpl-text", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}}),
    ]
}

#[tokio::test]
async fn sse_stream_assembles_tool_calls_split_across_chunks() {
    let server = Server::start([Reply::Sse(split_tool_call_events())]).await;
    let tools = vec![ToolSpec::new("weather", "weather", json!({"type": "object"}))];
    let stream = model(&server, 0).bind_tools(tools).stream(ask("weather?")).await.unwrap();
    let mut chunks = 0;
    let message = collect_stream(stream, |id, _| {
        assert_eq!(id, "chatcmpl-text");
        chunks += 1;
    })
    .await
    .unwrap();
    assert_eq!(chunks, 11);
    assert_eq!(message.text(), "Let me check.");
    assert_eq!(message.additional_kwargs()["reasoning_content"], "需要查天气");
    let calls = message.tool_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!((calls[0].name.as_str(), calls[0].id.as_deref()), ("weather", Some("call_a")));
    assert_eq!(calls[0].args, json!({"city": "巴黎"}));
    assert_eq!(calls[1].args, json!({"tz": "UTC"}));
    assert_eq!(message.response_metadata()["finish_reason"], "tool_calls");
    assert_eq!(message.usage().unwrap().total_tokens, 29);

    let body = &server.seen()[0].body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["tools"][0]["function"]["name"], "weather");
}

#[tokio::test]
async fn unauthorized_is_a_typed_error_and_not_retried() {
    let server = Server::start([api_error(401, "invalid_request_error", "invalid_api_key")]).await;
    let err = model(&server, 3).invoke(ask("hi")).await.unwrap_err();
    match &err {
        Error::Api { status: 401, code: Some(code), kind: Some(kind), .. } => {
            assert_eq!((code.as_str(), kind.as_str()), ("invalid_api_key", "invalid_request_error"));
        }
        other => panic!("expected a 401, got {other:?}"),
    }
    assert!(!err.is_retryable());
    assert_eq!(server.seen().len(), 1);
}

#[tokio::test]
async fn rate_limit_is_retried_then_succeeds() {
    let limited = json!({"error": {"message": "slow down", "type": "requests", "param": null, "code": "rate_limit_exceeded"}});
    let server = Server::start([
        Reply::Json(429, limited.clone(), vec![("retry-after", "0")]),
        Reply::Json(429, limited, vec![("retry-after", "0")]),
        Reply::Text("finally"),
    ])
    .await;
    let message = model(&server, 2).invoke(ask("hi")).await.unwrap();
    assert_eq!(message.text(), "finally");
    assert_eq!(server.seen().len(), 3);
}

#[tokio::test]
async fn rate_limit_on_a_stream_is_retried_before_the_first_chunk() {
    let limited = json!({"error": {"message": "slow down", "type": "requests", "param": null, "code": null}});
    let server =
        Server::start([Reply::Json(429, limited, vec![("retry-after", "0")]), Reply::Text("ok then")]).await;
    let stream = model(&server, 1).stream(ask("hi")).await.unwrap();
    assert_eq!(collect_stream(stream, |_, _| {}).await.unwrap().text(), "ok then");
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn server_error_is_retried_then_reported() {
    let boom = || Reply::Json(500, json!("upstream exploded"), vec![]);
    let server = Server::start([boom(), boom()]).await;
    let err = model(&server, 1).invoke(ask("hi")).await.unwrap_err();
    assert_eq!(err.status(), Some(500), "{err:?}");
    assert!(err.is_retryable());
    assert_eq!(server.seen().len(), 2);
}

#[tokio::test]
async fn connection_dropped_mid_stream_ends_with_a_stream_error() {
    let partial = vec![delta(json!({"content": "Hel"}), None), delta(json!({"content": "lo"}), None)];
    let server = Server::start([Reply::SseThenDrop(partial)]).await;
    let mut stream = model(&server, 0).stream(ask("hi")).await.unwrap();
    let mut text = String::new();
    let mut failure = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(chunk) => text.push_str(&chunk.content),
            Err(e) => failure = Some(e),
        }
    }
    assert_eq!(text, "Hello");
    assert!(matches!(failure, Some(Error::Stream { .. })), "{failure:?}");
}

#[tokio::test]
async fn stream_closed_without_finish_reason_is_incomplete() {
    let partial = vec![delta(json!({"content": "Hel"}), None)];
    let server = Server::start([Reply::SseNoDone(partial)]).await;
    let stream = model(&server, 0).stream(ask("hi")).await.unwrap();
    let err = collect_stream(stream, |_, _| {}).await.unwrap_err();
    assert!(matches!(err, Error::StreamIncomplete), "{err:?}");
}

#[tokio::test]
async fn error_event_inside_a_stream_is_reported() {
    let events = vec![
        delta(json!({"content": "Hel"}), None),
        json!({"error": {"message": "model overloaded", "code": "overloaded"}}),
    ];
    let server = Server::start([Reply::Sse(events)]).await;
    let stream = model(&server, 0).stream(ask("hi")).await.unwrap();
    let err = collect_stream(stream, |_, _| {}).await.unwrap_err();
    assert!(
        matches!(err, Error::StreamEvent { ref message, .. } if message == "model overloaded"),
        "{err:?}"
    );
}

#[tokio::test]
async fn unreachable_endpoint_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let config = OpenAiConfig::new("m").with_base_url(format!("http://{addr}/v1")).with_max_retries(0);
    let err = OpenAiChatModel::new(config).unwrap().invoke(ask("hi")).await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err:?}");
}

#[tokio::test]
async fn tool_call_history_is_sent_in_openai_form() {
    let server = Server::start([Reply::Text("done")]).await;
    let history = vec![
        Message::human("weather?"),
        Message::ai("")
            .with_tool_calls(vec![ToolCall::new("weather", json!({"city": "Paris"}), "c1")])
            .with_additional_kwargs(serde_json::from_value(json!({"reasoning_content": "think"})).unwrap()),
        Message::tool("sunny", "c1"),
    ];
    model(&server, 0).invoke(ChatRequest::new(history)).await.unwrap();
    let sent = &server.seen()[0].body["messages"];
    assert_eq!(sent[1]["content"], serde_json::Value::Null);
    assert_eq!(sent[1]["tool_calls"][0]["id"], "c1");
    assert_eq!(sent[1]["tool_calls"][0]["function"]["arguments"], r#"{"city":"Paris"}"#);
    assert!(sent[1].get("reasoning_content").is_none());
    assert_eq!(sent[2]["tool_call_id"], "c1");
}

#[tokio::test]
async fn embeddings_come_back_in_input_order() {
    let reply = json!({"object": "list", "model": "emb", "data": [
        {"object": "embedding", "index": 1, "embedding": [0.0, 1.0, 0.0]},
        {"object": "embedding", "index": 0, "embedding": [1.0, 0.0, 0.0]}
    ], "usage": {"prompt_tokens": 4, "total_tokens": 4}});
    let server =
        Server::start([Reply::Json(200, reply.clone(), vec![]), Reply::Json(200, reply, vec![])]).await;
    let config = OpenAiConfig::new("emb").with_base_url(server.base_url());
    let embed = OpenAiEmbeddings::new(config.clone(), 3).unwrap().send_dimensions();
    let vectors = embed.embed_documents(&["红苹果".to_owned(), "blue sky".to_owned()]).await.unwrap();
    assert_eq!(vectors, vec![vec![1.0, 0.0, 0.0], vec![0.0, 1.0, 0.0]]);
    assert_eq!(embed.dims(), 3);
    let seen = server.seen();
    assert_eq!(seen[0].path, "/v1/embeddings");
    assert_eq!(seen[0].body["input"], json!(["红苹果", "blue sky"]));
    assert_eq!(seen[0].body["dimensions"], 3);

    let wrong = OpenAiEmbeddings::new(config, 8).unwrap();
    assert!(wrong.embed_query("x").await.is_err());
}

/// A graph node calling the model: with the `messages` stream mode its tokens reach the stream
/// tagged with the node, and the final state is the one a plain `invoke` produces.
#[tokio::test]
async fn tokens_reach_the_graph_stream_and_state_matches_invoke() {
    let server =
        Server::start([Reply::Text("hello from the model"), Reply::Text("hello from the model")]).await;
    let llm = model(&server, 0);
    let graph = StateGraph::<MessagesState>::new()
        .add_node("agent", move |s: MessagesState, rt: Runtime| {
            let llm = llm.clone();
            async move {
                let reply = llm.invoke_in_graph(ChatRequest::new(s.messages), &rt).await?;
                Ok::<_, mnemograph_models::Error>(MessagesStateUpdate::messages(vec![reply]))
            }
        })
        .add_edge(START, "agent")
        .compile()
        .unwrap();
    let input = || MessagesStateUpdate::messages(vec![Message::human("hi").with_id("h1")]);
    let plain = graph.invoke(input(), &RunConfig::new()).await.unwrap().into_state();

    let mut tokens = Vec::new();
    let mut last = None;
    let mut events =
        graph.stream(input(), &RunConfig::new()).modes([StreamMode::Messages, StreamMode::Values]);
    while let Some(event) = events.next().await {
        match event.unwrap() {
            StreamEvent::Messages { chunk, metadata } => {
                assert_eq!(&*metadata.node, "agent");
                assert_eq!(metadata.step, 1);
                assert_eq!(chunk.id(), Some("chatcmpl-text"));
                tokens.push(chunk.text());
            }
            StreamEvent::Values(state) => last = Some(state),
            _ => {}
        }
    }
    assert_eq!(tokens.concat(), "hello from the model");
    assert!(tokens.len() >= 4);
    let streamed = last.unwrap();
    assert_eq!(streamed.messages.len(), 2);
    assert_eq!(streamed.messages, plain.messages);
    let bodies: Vec<_> = server.seen().iter().map(|s| s.body["stream"].clone()).collect();
    assert_eq!(bodies, [json!(false), json!(true)]);
}
