//! A loopback server speaking the OpenAI chat protocol: it answers the first call with a call
//! of the `lookup` tool and the second with text, as JSON or SSE as the request asks.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use serde_json::{json, Value};

/// The answer of the second call.
pub const ANSWER: &str = "OTLP is the OpenTelemetry protocol";

/// The running server.
pub struct FakeOpenAi {
    addr: SocketAddr,
}

impl FakeOpenAi {
    pub async fn start() -> Self {
        let app = Router::new()
            .route("/v1/chat/completions", post(reply))
            .with_state(Arc::new(AtomicUsize::new(0)));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { addr }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

const USAGE: [(u64, u64); 2] = [(11, 7), (23, 5)];

async fn reply(State(calls): State<Arc<AtomicUsize>>, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap();
    let call = calls.fetch_add(1, Ordering::SeqCst);
    let (input, output) = USAGE[call.min(1)];
    // Distinct ids: the agent's message reducer replaces a message that has the same id.
    let id = format!("chatcmpl-{call}");
    let usage = json!({"prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output});
    let (message, finish) = if call == 0 {
        let tool_call = json!({"id": "call-1", "type": "function",
                               "function": {"name": "lookup", "arguments": "{\"q\":\"otlp\"}"}});
        (json!({"role": "assistant", "content": null, "tool_calls": [tool_call]}), "tool_calls")
    } else {
        (json!({"role": "assistant", "content": ANSWER}), "stop")
    };
    if request["stream"] == true {
        let mut delta = message.clone();
        if let Some(calls) = delta.get_mut("tool_calls").and_then(Value::as_array_mut) {
            for (i, call) in calls.iter_mut().enumerate() {
                call["index"] = json!(i);
            }
        }
        let chunk = |choices: Value, usage: Value| {
            json!({"id": id, "object": "chat.completion.chunk", "model": "test-model-1",
                   "choices": choices, "usage": usage})
        };
        let frames = [
            chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]), Value::Null),
            chunk(json!([{"index": 0, "delta": {}, "finish_reason": finish}]), Value::Null),
            chunk(json!([]), usage),
        ];
        let mut text: String = frames.iter().map(|f| format!("data: {f}\n\n")).collect();
        text.push_str("data: [DONE]\n\n");
        return Response::builder()
            .header("content-type", "text/event-stream")
            .body(Body::from(text))
            .unwrap();
    }
    let body = json!({
        "id": id, "object": "chat.completion", "model": "test-model-1",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": usage,
    });
    Response::builder().header("content-type", "application/json").body(Body::from(body.to_string())).unwrap()
}
