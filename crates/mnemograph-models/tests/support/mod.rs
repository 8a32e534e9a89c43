//! A scripted OpenAI-protocol server on 127.0.0.1:0 for the client tests.

#![allow(dead_code, unreachable_pub)]

pub mod spans;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use futures_util::StreamExt;
use parking_lot::Mutex;
use serde_json::{json, Value};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// A status, a JSON body and extra headers.
    Json(u16, Value, Vec<(&'static str, &'static str)>),
    /// An SSE stream of these `data:` payloads, ended by `[DONE]`.
    Sse(Vec<Value>),
    /// An SSE stream of these payloads, then the connection is cut mid-body.
    SseThenDrop(Vec<Value>),
    /// An SSE stream of these payloads that ends cleanly without `[DONE]`.
    SseNoDone(Vec<Value>),
    /// A text reply, as JSON or as SSE word chunks depending on the request's `stream`.
    Text(&'static str),
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    seen: Mutex<Vec<Seen>>,
}

/// The running server.
pub struct Server {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl Server {
    /// Starts a server answering with `script`, in order.
    pub async fn start(script: impl IntoIterator<Item = Reply>) -> Self {
        let shared = Arc::new(Shared::default());
        shared.script.lock().extend(script);
        let app = Router::new()
            .route("/v1/chat/completions", post(handle))
            .route("/v1/embeddings", post(handle))
            .with_state(Arc::clone(&shared));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { addr, shared }
    }

    /// The base URL to configure clients with.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Requests received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().clone()
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let authorization = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let streaming = body["stream"] == true;
    shared.seen.lock().push(Seen { path: uri.path().to_owned(), authorization, body });
    let reply = shared.script.lock().pop_front().expect("the server's script ran out");
    match reply {
        Reply::Json(status, value, headers) => {
            let mut builder = Response::builder().status(StatusCode::from_u16(status).unwrap());
            builder = builder.header("content-type", "application/json");
            for (k, v) in headers {
                builder = builder.header(k, v);
            }
            builder.body(Body::from(value.to_string())).unwrap()
        }
        Reply::Sse(events) => sse(events, Ending::Done),
        Reply::SseThenDrop(events) => sse(events, Ending::Drop),
        Reply::SseNoDone(events) => sse(events, Ending::Close),
        Reply::Text(text) if streaming => sse(text_chunks(text), Ending::Done),
        Reply::Text(text) => Response::builder()
            .header("content-type", "application/json")
            .body(Body::from(completion(text).to_string()))
            .unwrap(),
    }
}

#[derive(Clone, Copy)]
enum Ending {
    Done,
    Drop,
    Close,
}

fn sse(events: Vec<Value>, ending: Ending) -> Response {
    let mut frames: Vec<Result<Bytes, std::io::Error>> =
        events.into_iter().map(|e| Ok(Bytes::from(format!("data: {e}\n\n")))).collect();
    match ending {
        Ending::Done => frames.push(Ok(Bytes::from_static(b"data: [DONE]\n\n"))),
        // An error item makes hyper abort the chunked body: the client sees a reset mid-stream.
        Ending::Drop => frames.push(Err(std::io::Error::other("cut"))),
        Ending::Close => {}
    }
    // Pace the frames so the client has read the headers and the first events before the end
    // (otherwise a cut connection may look like a failed request rather than a broken stream).
    let paced = futures_util::stream::iter(frames).then(|frame| async move {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        frame
    });
    Response::builder().header("content-type", "text/event-stream").body(Body::from_stream(paced)).unwrap()
}

/// A complete non-streamed reply with `text`.
pub fn completion(text: &str) -> Value {
    json!({
        "id": "chatcmpl-text", "object": "chat.completion", "model": "test-model",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    })
}

/// `text` as streamed word chunks, a finish chunk and a usage chunk.
pub fn text_chunks(text: &str) -> Vec<Value> {
    let mut out: Vec<Value> = text.split_inclusive(' ').map(|w| delta(json!({"content": w}), None)).collect();
    out.push(delta(json!({}), Some("stop")));
    out.push(json!({"id": "chatcmpl-text", "model": "test-model", "choices": [],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}}));
    out
}

/// One `chat.completion.chunk` with this delta.
pub fn delta(delta: Value, finish: Option<&str>) -> Value {
    let mut chunk = json!({"id": "chatcmpl-text", "object": "chat.completion.chunk", "model": "test-model",
                           "choices": [{"index": 0, "finish_reason": finish}]});
    chunk["choices"][0]["delta"] = delta;
    chunk
}
