//! The fault test's clients: the cluster's HTTP API reached through any process, and a run
//! created, joined or streamed with reconnections, as each client of the test does it.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{CHUNK_TIMEOUT, PATIENCE};

/// The cluster as clients reach it: any process answers any request.
#[derive(Clone)]
pub(crate) struct Api {
    pub(crate) http: reqwest::Client,
    pub(crate) ports: Vec<u16>,
}

impl Api {
    pub(crate) fn url(&self, process: usize, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.ports[process % self.ports.len()])
    }

    /// A request answered with success by a process (from `start` on), tried again, on the next
    /// process, while the processes or their database cannot answer it.
    pub(crate) async fn call(
        &self,
        start: usize,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Value {
        let deadline = Instant::now() + PATIENCE;
        for i in start.. {
            let mut request = self.http.request(method.clone(), self.url(i, path)).timeout(PATIENCE);
            if let Some(body) = body {
                request = request.json(body);
            }
            let failure = match request.send().await {
                Ok(r) if r.status().is_success() => return r.json().await.expect("a JSON answer"),
                Ok(r) if r.status().is_server_error() => format!("{}", r.status()),
                Ok(r) => panic!("{method} {path}: {} {}", r.status(), r.text().await.unwrap_or_default()),
                Err(e) => e.to_string(),
            };
            assert!(Instant::now() < deadline, "no process answered {method} {path}: {failure}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        unreachable!("the loop only ends by returning or panicking")
    }
}

/// One event as a client received it.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub(crate) id: String,
    pub(crate) event: String,
    pub(crate) data: Value,
}

/// The event of one SSE block; `None` for a comment (the heartbeat).
pub(crate) fn parse(block: &str) -> Option<Frame> {
    let (mut id, mut event, mut data) = (None, None, None);
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("id: ") {
            id = Some(v.to_owned());
        } else if let Some(v) = line.strip_prefix("event: ") {
            event = Some(v.to_owned());
        } else if let Some(v) = line.strip_prefix("data: ") {
            data = Some(serde_json::from_str(v).expect("an event's data is JSON"));
        }
    }
    Some(Frame { id: id?, event: event?, data: data.unwrap_or(Value::Null) })
}

/// A run as its client streamed it.
#[derive(Debug)]
pub(crate) struct Streamed {
    pub(crate) run_id: String,
    pub(crate) tag: String,
    pub(crate) frames: Vec<Frame>,
    /// Connections made to stream it.
    pub(crate) connections: usize,
    /// Connections that broke (other than the one the client dropped on purpose).
    pub(crate) broken: usize,
    /// The run's status, read just after its stream ended.
    pub(crate) status_at_end: String,
}

/// Queues a run on `thread`, tagged `{tag}x{try}`; its id and tag. A request whose answer was
/// lost may still have queued its run: the checks take every run the thread has, so each try
/// has a tag of its own.
pub(crate) async fn create(api: &Api, start: usize, thread: &str, tag: &str) -> (String, String) {
    let deadline = Instant::now() + PATIENCE;
    for k in start.. {
        let tag = format!("{tag}x{}", k - start);
        let body = json!({ "assistant_id": "tokens", "input": { "tag": tag }, "stream_mode": ["custom"],
                           "multitask_strategy": "enqueue" });
        let request = api.http.post(api.url(k, &format!("/threads/{thread}/runs"))).json(&body);
        let failure = match request.timeout(PATIENCE).send().await {
            Ok(r) if r.status().is_success() => {
                let run: Value = r.json().await.expect("a run");
                return (run["run_id"].as_str().expect("a run id").to_owned(), tag);
            }
            Ok(r) if r.status().is_server_error() => r.status().to_string(),
            Ok(r) => panic!("creating a run: {} {}", r.status(), r.text().await.unwrap_or_default()),
            Err(e) => e.to_string(),
        };
        assert!(Instant::now() < deadline, "no process queued a run: {failure}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    unreachable!("the loop only ends by returning or panicking")
}

/// A run as its client joined it.
#[derive(Debug)]
pub(crate) struct Joined {
    pub(crate) run_id: String,
    pub(crate) tag: String,
    /// What the join answered: the thread's values after the run, or its error.
    pub(crate) output: Value,
    /// When a join failed (a server error or a connection lost), to be tried again.
    pub(crate) failures: Vec<Instant>,
}

/// Waits for a run to end through `/join`, from the processes in turn, starting at `start`.
pub(crate) async fn join(api: &Api, start: usize, thread_id: &str, run_id: &str, tag: &str) -> Joined {
    let path = format!("/threads/{thread_id}/runs/{run_id}/join");
    let deadline = Instant::now() + PATIENCE;
    let mut failures = Vec::new();
    for k in start.. {
        match api.http.get(api.url(k, &path)).timeout(PATIENCE).send().await {
            Ok(r) if r.status().is_success() => {
                let output = r.json().await.expect("a join's answer");
                return Joined { run_id: run_id.to_owned(), tag: tag.to_owned(), output, failures };
            }
            Ok(r) if r.status().is_server_error() => failures.push(Instant::now()),
            Ok(r) => panic!("GET {path}: {} {}", r.status(), r.text().await.unwrap_or_default()),
            Err(_) => failures.push(Instant::now()),
        }
        assert!(Instant::now() < deadline, "run {run_id}: no join answered within {PATIENCE:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    unreachable!("the loop only ends by returning or panicking")
}

/// Streams a run from the processes in turn, starting at `start`, until its stream
/// ends: drops the connection once after `drop_after` events, and reconnects with
/// `Last-Event-ID` then and whenever the connection breaks or a process cannot serve it.
pub(crate) async fn stream(
    api: &Api,
    start: usize,
    thread_id: &str,
    run_id: &str,
    tag: &str,
    drop_after: usize,
) -> Streamed {
    let path = format!("/threads/{thread_id}/runs/{run_id}/stream");
    let deadline = Instant::now() + PATIENCE;
    let (mut frames, mut process, mut connections, mut broken, mut dropped) =
        (Vec::<Frame>::new(), start, 0, 0, false);
    loop {
        assert!(Instant::now() < deadline, "run {run_id}: its stream did not end within {PATIENCE:?}");
        let mut request = api.http.get(api.url(process, &path));
        if let Some(last) = frames.last() {
            request = request.header("Last-Event-ID", &last.id);
        }
        let mut response = match request.send().await {
            Ok(r) if r.status().is_success() => r,
            Ok(r) if r.status().is_server_error() => {
                process += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            Ok(r) => panic!("GET {path}: {}", r.status()),
            Err(_) => {
                process += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        connections += 1;
        let mut text = String::new();
        let ended = loop {
            match tokio::time::timeout(CHUNK_TIMEOUT, response.chunk()).await {
                Ok(Ok(Some(chunk))) => {
                    text.push_str(std::str::from_utf8(&chunk).expect("UTF-8 events"));
                    while let Some(at) = text.find("\r\n\r\n") {
                        frames.extend(parse(&text[..at]));
                        text.drain(..at + 4);
                    }
                    if !dropped && frames.len() >= drop_after {
                        dropped = true;
                        break false;
                    }
                }
                Ok(Ok(None)) => break true,
                Ok(Err(_)) | Err(_) => {
                    broken += 1;
                    break false;
                }
            }
        };
        if ended {
            assert!(text.trim().is_empty(), "run {run_id}: the stream ended inside an event: {text:?}");
            break;
        }
        process += 1;
    }
    let record =
        api.call(process, reqwest::Method::GET, &format!("/threads/{thread_id}/runs/{run_id}"), None).await;
    let status_at_end = record["status"].as_str().expect("a status").to_owned();
    Streamed { run_id: run_id.to_owned(), tag: tag.to_owned(), frames, connections, broken, status_at_end }
}
