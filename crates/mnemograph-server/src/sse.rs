//! A run's events as a server-sent-event stream: `event:`, `data:` and `id:` lines per event, the
//! `metadata` event first, ending when the run ends. Every event has an id, so a client that
//! reconnects with `Last-Event-ID` continues after the last event it read.

use std::convert::Infallible;
use std::pin::pin;

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use futures_util::future::select;
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::streams::Slot;

/// How long a stream stays silent before it sends a heartbeat comment, as LangGraph's server does.
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(5);

/// One event of a run: its id (what a client sends back as `Last-Event-ID`), name and data.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The event's id, which `Last-Event-ID` names.
    pub id: String,
    /// The event's name.
    pub event: String,
    /// The data as JSON text, shared with the run's kept events rather than copied per reader.
    pub data: Bytes,
}

/// A run's events from some point on, ending when the run ends.
pub type Frames = BoxStream<'static, Frame>;

/// Appends the text of one event to `out`.
fn encode(frame: &Frame, out: &mut Vec<u8>) {
    // JSON text holds no raw newline, so the payload is one `data:` line.
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(frame.event.as_bytes());
    out.extend_from_slice(b"\r\ndata: ");
    out.extend_from_slice(&frame.data);
    out.extend_from_slice(b"\r\nid: ");
    out.extend_from_slice(frame.id.as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
}

/// The id of the last event a reconnecting client read (`Last-Event-ID`).
pub(crate) fn last_event_id(headers: &HeaderMap) -> Option<String> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// Calls its function when dropped, unless defused: a client that goes away before the run ends.
struct DropGuard(Option<Box<dyn FnOnce() + Send>>);

impl Drop for DropGuard {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// Streams `frames` until they end. `location` is the run's path, given on the stream that
/// creates the run. When `on_drop` is set, it is called if the client goes away before the run
/// ends.
/// `slot` counts the stream against its caller's open streams while the response lasts.
pub(crate) fn respond(
    mut frames: Frames,
    location: Option<String>,
    on_drop: Option<Box<dyn FnOnce() + Send>>,
    slot: Slot,
) -> Response {
    // Frames are read in a task of their own, so that a heartbeat never interrupts a read in
    // flight; the body reads the channel, which a timeout may interrupt safely. The task ends
    // when the client goes away, even while it waits for an event that does not come (a quiet
    // run, or a cluster's reader waiting for Redis to come back).
    let (tx, rx) = mpsc::channel::<Frame>(64);
    tokio::spawn(async move {
        let forward = async {
            while let Some(frame) = frames.next().await {
                if tx.send(frame).await.is_err() {
                    return;
                }
            }
        };
        select(pin!(forward), pin!(tx.closed())).await;
    });
    let state = (rx, DropGuard(on_drop), slot);
    let body = futures_util::stream::unfold(state, |(mut rx, mut guard, slot)| async move {
        match tokio::time::timeout(HEARTBEAT, rx.recv()).await {
            Ok(Some(first)) => {
                let mut chunk = Vec::new();
                encode(&first, &mut chunk);
                while let Ok(more) = rx.try_recv() {
                    encode(&more, &mut chunk);
                }
                Some((Ok::<_, Infallible>(Bytes::from(chunk)), (rx, guard, slot)))
            }
            Ok(None) => {
                // Everything was sent and the run is over: the client did not go away early.
                drop(guard.0.take());
                None
            }
            // A quiet run: a comment line keeps proxies and clients from timing the stream out.
            Err(_) => Some((Ok(Bytes::from_static(b": heartbeat\r\n\r\n")), (rx, guard, slot))),
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
