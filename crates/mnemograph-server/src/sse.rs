//! A run's events as a server-sent-event stream: `event:`, `data:` and `id:` lines per event, the
//! `metadata` event first, ending when the run ends. Every event has an id (its index), so a
//! client that reconnects with `Last-Event-ID` continues after the last event it read.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use futures_util::stream;

use crate::run::RunHandle;

/// How long a stream stays silent before it sends a heartbeat comment, as LangGraph's server does.
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(5);

/// The text of one event.
fn encode(id: usize, event: &str, data: &serde_json::Value) -> Bytes {
    // JSON text holds no raw newline, so the payload is one `data:` line.
    Bytes::from(format!("event: {event}\r\ndata: {data}\r\nid: {id}\r\n\r\n"))
}

/// The index of the first event to send, from a `Last-Event-ID` header.
pub(crate) fn resume_from(headers: &HeaderMap) -> usize {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(0, |last| last + 1)
}

/// Streams `run`'s events from index `from` until the run ends. `location` is the run's path,
/// given on the stream that creates the run. When `on_drop` is set, it is called if the client
/// goes away before the run ends.
pub(crate) fn stream_run(
    run: Arc<RunHandle>,
    from: usize,
    location: Option<String>,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
) -> Response {
    struct Reader {
        run: Arc<RunHandle>,
        next: usize,
        progress: tokio::sync::watch::Receiver<crate::run::Progress>,
        guard: DropGuard,
    }
    struct DropGuard(Option<Box<dyn FnOnce() + Send>>);
    impl Drop for DropGuard {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    let progress = run.progress();
    let reader = Reader { run, next: from, progress, guard: DropGuard(on_drop) };
    let body = stream::unfold(reader, |mut r| async move {
        loop {
            // Read `done` before the events: a run pushes its last event before it is done, so
            // an empty read after `done` means nothing more will come.
            let done = r.progress.borrow_and_update().done;
            let events = r.run.events_from(r.next);
            if !events.is_empty() {
                let mut chunk = Vec::new();
                for (i, (event, data)) in events.iter().enumerate() {
                    chunk.extend_from_slice(&encode(r.next + i, event, data));
                }
                r.next += events.len();
                return Some((Ok::<_, Infallible>(Bytes::from(chunk)), r));
            }
            if done {
                // Everything was sent and the run is over: the client did not go away early.
                drop(r.guard.0.take());
                return None;
            }
            match tokio::time::timeout(HEARTBEAT, r.progress.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => return None,
                // A quiet run: a comment line keeps proxies and clients from timing the stream out.
                Err(_) => return Some((Ok(Bytes::from_static(b": heartbeat\r\n\r\n")), r)),
            }
        }
    });
    let mut response = Body::from_stream(body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream; charset=utf-8"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    if let Some(location) = location {
        // `Location` names the run's join stream: the JavaScript client reconnects there with
        // `Last-Event-ID` when the connection drops before the run ends, and gives up without it.
        if let Ok(join) = HeaderValue::from_str(&format!("{location}/stream")) {
            headers.insert(header::LOCATION, join);
        }
        if let Ok(run) = HeaderValue::from_str(&location) {
            headers.insert(header::CONTENT_LOCATION, run);
        }
    }
    response
}
