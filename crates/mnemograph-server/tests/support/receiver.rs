//! A webhook receiver for the tests: a real HTTP/1.1 server on a loopback port that answers each
//! request as its script says — a status, a redirect, a connection closed without an answer, or
//! no answer at all — then 200, and keeps what it was sent.
//!
//! It speaks HTTP over plain sockets rather than through a framework so that it can break a
//! connection mid-request, which is what a receiver that crashes does.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How the receiver answers one request.
#[derive(Debug, Clone)]
pub(crate) enum Answer {
    /// This status, with an empty body.
    Status(u16),
    /// `307 Temporary Redirect` to this URL.
    Redirect(String),
    /// Closes the connection without answering.
    Close,
    /// Never answers, holding the connection open.
    Hang,
}

/// One request the receiver got.
#[derive(Debug, Clone)]
pub(crate) struct Got {
    /// Its body, as JSON.
    pub(crate) body: Value,
    /// Its `Content-Type`.
    pub(crate) content_type: String,
    /// Whether it was answered with a 2xx: a delivery.
    pub(crate) delivered: bool,
}

/// A running receiver; it stops with the test's runtime.
#[derive(Clone)]
pub(crate) struct Receiver {
    /// Its URL, with the path `/hook`.
    pub(crate) url: String,
    state: Arc<Mutex<State>>,
}

struct State {
    script: VecDeque<Answer>,
    got: Vec<Got>,
}

impl Receiver {
    /// A receiver answering its first requests by `script`, and 200 after.
    pub(crate) async fn start(script: Vec<Answer>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port for the receiver");
        let url = format!("http://{}/hook", listener.local_addr().expect("its address"));
        let state = Arc::new(Mutex::new(State { script: script.into(), got: Vec::new() }));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, shared.clone()));
            }
        });
        Self { url, state }
    }

    /// `host:port` of the receiver, as a webhook policy names it.
    pub(crate) fn host(&self) -> String {
        self.url.trim_start_matches("http://").trim_end_matches("/hook").to_owned()
    }

    /// Every request it got, in order.
    pub(crate) fn requests(&self) -> Vec<Got> {
        self.state.lock().unwrap().got.clone()
    }

    /// The bodies of the requests it answered with a 2xx.
    pub(crate) fn delivered(&self) -> Vec<Value> {
        self.requests().into_iter().filter(|g| g.delivered).map(|g| g.body).collect()
    }

    /// Waits (up to 20 s) until `n` requests were delivered; their bodies.
    pub(crate) async fn wait_delivered(&self, n: usize) -> Vec<Value> {
        self.wait(|r| r.delivered().len() >= n, &format!("{n} deliveries")).await;
        self.delivered()
    }

    /// Waits (up to 20 s) until `n` requests arrived, however they were answered.
    pub(crate) async fn wait_requests(&self, n: usize) {
        self.wait(|r| r.requests().len() >= n, &format!("{n} requests")).await;
    }

    async fn wait(&self, done: impl Fn(&Self) -> bool, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !done(self) {
            assert!(Instant::now() < deadline, "the receiver did not get {what}: {:?}", self.requests());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Reads one request from `stream` and answers it by the script.
async fn serve(mut stream: TcpStream, state: Arc<Mutex<State>>) {
    let Some((head, body)) = read_request(&mut stream).await else { return };
    let answer = state.lock().unwrap().script.pop_front().unwrap_or(Answer::Status(200));
    let delivered = matches!(answer, Answer::Status(s) if (200..300).contains(&s));
    let content_type = header(&head, "content-type").unwrap_or_default();
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    state.lock().unwrap().got.push(Got { body, content_type, delivered });
    let reply = match answer {
        Answer::Status(status) => {
            format!("HTTP/1.1 {status} Scripted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        }
        Answer::Redirect(to) => format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        ),
        Answer::Close => return,
        Answer::Hang => {
            std::future::pending::<()>().await;
            return;
        }
    };
    let _ = stream.write_all(reply.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// The request's head (as text) and its body, read by its `Content-Length`.
async fn read_request(stream: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let length: usize = header(&head, "content-length").and_then(|l| l.parse().ok()).unwrap_or(0);
    let mut body = buf[end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
        body.extend_from_slice(&chunk[..n]);
    }
    Some((head, body))
}

/// The value of header `name` in a request head.
fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim().to_owned())
    })
}
