//! What the OpenAI-compatible client does with a broken server: invalid UTF-8 in a JSON body and
//! in an SSE event, truncated and garbage event streams, bodies of the wrong shape. The server is
//! a plain `tokio` TCP listener on loopback writing raw HTTP/1.1 bytes (no HTTP library, so it
//! can send exactly the bytes under test). Every call must end, within a bound, in a reply or a
//! typed [`Error`]; none may panic.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::StreamExt;
use mnemograph_core::messages::Message;
use mnemograph_models::{ChatModel, ChatRequest, Error, OpenAiChatModel, OpenAiConfig};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Longest any call may take: a hang is a failure too.
const LIMIT: Duration = Duration::from_secs(10);

/// One raw response: the head, then body pieces written separately with a pause between them
/// (so the client sees them as separate reads), then the connection is closed.
#[derive(Debug, Clone)]
struct Raw {
    head: String,
    pieces: Vec<Vec<u8>>,
}

impl Raw {
    /// A response with `Content-Length`.
    fn json(status: u16, body: &[u8]) -> Self {
        let head = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n",
            body.len()
        );
        Self { head, pieces: vec![body.to_vec()] }
    }

    /// An event stream that ends when the connection closes.
    fn sse(pieces: Vec<Vec<u8>>) -> Self {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
                    Connection: close\r\n\r\n"
            .to_owned();
        Self { head, pieces }
    }
}

/// Serves `responses` to successive connections on 127.0.0.1:0; returns the base URL.
async fn serve(responses: Vec<Raw>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let addr: SocketAddr = listener.local_addr().expect("bound");
    tokio::spawn(async move {
        for response in responses {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            if read_request(&mut socket).await.is_err() {
                continue;
            }
            let _ = write_response(&mut socket, &response).await;
        }
    });
    format!("http://{addr}/v1")
}

/// Reads one request (head and `Content-Length` body) so the client never sees a reset.
async fn read_request(socket: &mut TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0_u8; 4096];
    let head_end = loop {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(())
}

async fn write_response(socket: &mut TcpStream, response: &Raw) -> std::io::Result<()> {
    socket.write_all(response.head.as_bytes()).await?;
    socket.flush().await?;
    for piece in &response.pieces {
        tokio::time::sleep(Duration::from_millis(5)).await;
        socket.write_all(piece).await?;
        socket.flush().await?;
    }
    socket.shutdown().await
}

fn model(base_url: &str) -> OpenAiChatModel {
    let config = OpenAiConfig::new("test-model")
        .with_base_url(base_url)
        .with_api_key("sk-test")
        .with_max_retries(0)
        .with_read_timeout(Duration::from_secs(5));
    OpenAiChatModel::new(config).expect("client")
}

fn ask() -> ChatRequest {
    ChatRequest::new(vec![Message::human("hi")])
}

/// `invoke` against one raw response.
async fn invoke(response: Raw) -> Result<Message, Error> {
    let url = serve(vec![response]).await;
    tokio::time::timeout(LIMIT, model(&url).invoke(ask())).await.expect("invoke hung")
}

/// The text streamed before the stream ended, and how it ended (`None`: cleanly).
async fn stream(pieces: Vec<Vec<u8>>) -> (String, Option<Error>) {
    let url = serve(vec![Raw::sse(pieces)]).await;
    let run = async {
        let mut chunks = match model(&url).stream(ask()).await {
            Ok(chunks) => chunks,
            Err(e) => return (String::new(), Some(e)),
        };
        let mut text = String::new();
        while let Some(item) = chunks.next().await {
            match item {
                Ok(chunk) => text.push_str(&chunk.content),
                Err(e) => {
                    // The stream ends after its first error.
                    assert!(chunks.next().await.is_none(), "items after an error");
                    return (text, Some(e));
                }
            }
        }
        (text, None)
    };
    tokio::time::timeout(LIMIT, run).await.expect("stream hung")
}

/// One SSE `data:` event.
fn event(data: &[u8]) -> Vec<u8> {
    [b"data: ".as_slice(), data, b"\n\n"].concat()
}

/// A content delta event.
fn delta(text: &str) -> Vec<u8> {
    let chunk = json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                       "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
    event(chunk.to_string().as_bytes())
}

fn finish() -> Vec<u8> {
    let chunk = json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    [event(chunk.to_string().as_bytes()), event(b"[DONE]")].concat()
}

/// A completion body whose content string is `raw` (bytes pasted between the quotes).
fn completion_with(raw: &[u8]) -> Vec<u8> {
    [
        br#"{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"#.as_slice(),
        br#""finish_reason":"stop","message":{"role":"assistant","content":""#.as_slice(),
        raw,
        br#""}}]}"#.as_slice(),
    ]
    .concat()
}

#[tokio::test]
async fn a_well_formed_reply_split_inside_a_character_reads_whole() {
    // The control case: the same server and client, valid bytes, a multi-byte character split
    // across two TCP writes; it must read exactly, so the failures below are about the bytes.
    let body = completion_with("你好".as_bytes());
    let cut = body.len() - 6;
    let response = Raw { pieces: vec![body[..cut].to_vec(), body[cut..].to_vec()], ..Raw::json(200, &body) };
    assert_eq!(invoke(response).await.expect("valid reply").text(), "你好");
    let piece = delta("你好");
    let cut = piece.len() - 8;
    let (text, end) = stream(vec![piece[..cut].to_vec(), piece[cut..].to_vec(), finish()]).await;
    assert_eq!((text.as_str(), end.map(|e| e.to_string())), ("你好", None));
}

#[tokio::test]
async fn invalid_utf8_and_malformed_json_bodies_are_decode_errors() {
    for (what, body) in [
        ("raw 0xff 0xfe inside the content string", completion_with(b"\xff\xfe")),
        ("a truncated UTF-8 sequence", completion_with(&"你".as_bytes()[..2])),
        ("a lone surrogate escape", completion_with(br"\ud800")),
        ("a body cut off mid-string", completion_with(b"x")[..40].to_vec()),
        ("an empty body", Vec::new()),
        ("binary garbage", vec![0, 1, 2, 0xff, 0xfe]),
    ] {
        let err = invoke(Raw::json(200, &body)).await.expect_err(what);
        assert!(matches!(err, Error::Decode { .. }), "{what}: {err:?}");
        assert!(!err.is_retryable(), "{what}: the same bytes would come back");
    }
    for (what, body) in
        [("null", "null"), ("no choices", r#"{"id":"x"}"#), ("choices a string", r#"{"choices":"x"}"#)]
    {
        let err = invoke(Raw::json(200, body.as_bytes())).await.expect_err(what);
        assert!(matches!(err, Error::MissingField("choices")), "{what}: {err:?}");
    }
}

#[tokio::test]
async fn an_error_status_with_an_invalid_utf8_body_keeps_the_status() {
    let err = invoke(Raw::json(500, b"\xff\xfe upstream exploded")).await.expect_err("500");
    let Error::Api { status, message, .. } = &err else { panic!("{err:?}") };
    assert_eq!(*status, 500);
    assert!(message.contains("upstream exploded"), "the readable part of the body is kept: {message:?}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn invalid_utf8_in_an_event_stream_is_a_stream_error_after_the_good_chunks() {
    let bad_event = event(b"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\xfe\"}}]}");
    for (what, pieces) in [
        ("inside a data line", vec![delta("hello"), bad_event, finish()]),
        ("between events", vec![delta("hello"), b"\xff\xfe\n\n".to_vec(), finish()]),
        ("a truncated sequence", vec![delta("hello"), event(&"好".as_bytes()[..1]), finish()]),
    ] {
        let (text, end) = stream(pieces).await;
        assert_eq!(text, "hello", "{what}: chunks before the bad bytes are delivered");
        assert!(matches!(end, Some(Error::Stream { .. })), "{what}: {end:?}");
    }
}

#[tokio::test]
async fn truncated_and_garbage_event_streams_end_in_typed_errors() {
    type Case = (&'static str, Vec<Vec<u8>>, fn(&Option<Error>) -> bool);
    let cases: Vec<Case> = vec![
        ("an event cut off mid-JSON", vec![delta("hello"), b"data: {\"id\":\"c1\",\"choi".to_vec()], |e| {
            matches!(e, Some(Error::StreamIncomplete))
        }),
        ("no finish_reason, no [DONE]", vec![delta("hello")], |e| matches!(e, Some(Error::StreamIncomplete))),
        ("keep-alive comments only", vec![b": ping\n\n".to_vec(), b": ping\n\n".to_vec()], |e| {
            matches!(e, Some(Error::StreamIncomplete))
        }),
        ("data that is not JSON", vec![delta("hello"), event(b"not json"), finish()], |e| {
            matches!(e, Some(Error::Decode { .. }))
        }),
        (
            "an error object",
            vec![delta("hello"), event(br#"{"error":{"message":"boom","code":"x"}}"#)],
            |e| matches!(e, Some(Error::StreamEvent { message, .. }) if message == "boom"),
        ),
        ("binary without newlines", vec![vec![0, 1, 2, 0xff]], |e| matches!(e, Some(Error::Stream { .. }))),
        ("a 64 KiB line without a newline", vec![vec![b'a'; 64 << 10]], |e| {
            matches!(e, Some(Error::StreamIncomplete))
        }),
        // Events of another shape are skipped (usage-only events have no choices), or refused.
        ("a JSON array", vec![delta("hello"), event(b"[1,2]"), finish()], |e| {
            e.is_none() || matches!(e, Some(Error::Decode { .. }))
        }),
        ("choices that are not a list", vec![delta("hello"), event(br#"{"choices":"x"}"#), finish()], |e| {
            e.is_none() || matches!(e, Some(Error::Decode { .. }))
        }),
    ];
    for (what, pieces, expected) in cases {
        let starts_well = pieces[0] == delta("hello");
        let (text, end) = stream(pieces).await;
        assert!(expected(&end), "{what}: ended with {end:?}");
        assert_eq!(text, if starts_well { "hello" } else { "" }, "{what}");
    }
}

/// One SSE line without a newline costs time quadratic in its length: async-openai's SSE parser
/// (eventsource-stream 0.2.3) re-parses the whole pending line on every network read
/// (jpopesculian/eventsource-stream#11). A server (or proxy) that never ends a line burns a core
/// until the read timeout, which does not fire while bytes keep arriving.
#[tokio::test]
#[ignore = "upstream: eventsource-stream re-parses the pending line per chunk (quadratic); a 1 MiB \
            unterminated line takes seconds in a debug build"]
async fn a_one_mebibyte_line_is_handled_in_linear_time() {
    let started = std::time::Instant::now();
    let (_, end) = stream(vec![vec![b'a'; 1 << 20]]).await;
    assert!(matches!(end, Some(Error::StreamIncomplete)), "{end:?}");
    assert!(started.elapsed() < Duration::from_secs(1), "took {:?}", started.elapsed());
}

/// `cases` cases from a fixed seed (unless `PROPTEST_RNG_SEED` sets one), so every run tests the
/// same inputs; no regression files are written into the source tree.
fn config(cases: u32) -> ProptestConfig {
    let base = ProptestConfig::default();
    let rng_seed = match base.rng_seed {
        RngSeed::Random => RngSeed::Fixed(0x00f0_22de_c0de),
        chosen @ RngSeed::Fixed(_) => chosen,
    };
    ProptestConfig { cases, rng_seed, failure_persistence: None, ..base }
}

proptest! {
    #![proptest_config(config(48))]

    /// Arbitrary bytes as an event stream (after a valid first event) and as a JSON body.
    #[test]
    fn arbitrary_bodies_end_in_a_reply_or_a_typed_error(
        pieces in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..200), 1..4),
        body in prop::collection::vec(any::<u8>(), 0..200),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let mut all = vec![delta("ok")];
            all.extend(pieces);
            check_stream_end(stream(all).await);
            check_reply(&body, invoke(Raw::json(200, &body)).await);
        });
    }
}

/// A stream that began with a complete `ok` event delivers that chunk first, then ends cleanly
/// (some garbage bytes do form a finishing event) or with one of the errors a broken `200` event
/// stream can give. A panic inside the client would fail the test before this is reached.
fn check_stream_end((text, end): (String, Option<Error>)) {
    assert!(text.starts_with("ok"), "the complete first event was not delivered: {text:?}");
    match end {
        None
        | Some(
            Error::Stream { .. } | Error::StreamIncomplete | Error::Decode { .. } | Error::StreamEvent { .. },
        ) => {}
        Some(other) => panic!("a 200 event stream ended in {other:?}"),
    }
}

/// A `200` JSON body gives an AI reply, or a typed error that matches the body: bytes that are
/// not JSON are a decode error, JSON of the wrong shape a missing field.
fn check_reply(body: &[u8], reply: Result<Message, Error>) {
    let is_json = serde_json::from_slice::<serde_json::Value>(body).is_ok();
    match reply {
        Ok(message) => {
            assert!(is_json, "a reply from a body that is not JSON: {message:?}");
            assert_eq!(message.kind(), mnemograph_core::messages::MessageType::Ai, "{message:?}");
        }
        Err(Error::Decode { .. }) => assert!(!is_json, "valid JSON {body:?} gave a decode error"),
        Err(Error::MissingField(field)) => {
            assert!(is_json, "`{field}` missing from a body that is not JSON");
            assert!(field.starts_with("choices"), "{field}");
        }
        Err(other) => panic!("a 200 JSON body ended in {other:?}"),
    }
}
