//! `GET /threads/{thread_id}/stream`: a thread's stream across its runs (see
//! [`thread_stream`](crate::thread_stream)).

use std::sync::Arc;

use axum::extract::{Extension, Path, Query, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use axum::Router;

use crate::app::App;
use crate::auth::{Action, Caller};
use crate::error::Result;
use crate::sse;
use crate::thread_stream::{self, Resume, ThreadModes};

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new().route("/threads/{thread_id}/stream", get(join))
}

/// Streams the thread as its reader may see it: a thread it may not read is not found. Reads
/// `stream_modes` (repeated, or comma-separated) and `Last-Event-ID`; other query parameters,
/// such as the `stream_mode` the Python client sends, are ignored as LangGraph's server ignores
/// them.
async fn join(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(thread_id): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> Result<Response> {
    let modes =
        ThreadModes::parse(query.iter().filter(|(k, _)| k == "stream_modes").map(|(_, v)| v.as_str()))?;
    let resume = Resume::parse(sse::last_event_id(&headers).as_deref())?;
    let grant = caller.thread_grant(Action::Read, &thread_id).await?;
    app.thread(&thread_id, &grant).await?;
    let slot = app.streams.open(&caller)?;
    let frames = thread_stream::frames(app.clone(), thread_id, grant, modes, resume);
    Ok(sse::respond(frames, None, None, slot))
}
