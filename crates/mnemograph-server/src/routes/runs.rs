//! Runs: create in the background, stream or wait; list, read, join, cancel and delete them.
//! `/runs/...` without a thread runs on a thread of its own, deleted afterwards unless
//! `on_completion` is `keep`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{body_or_default, page};
use crate::app::App;
use crate::auth::{Action, Caller, Resource};
use crate::error::{Result, ServerError};
use crate::handle::RunRef;
use crate::page::Count;
use crate::request::RunCreate;
use crate::run::Stop;
use crate::sse;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/threads/{thread_id}/runs", post(create).get(list))
        .route("/threads/{thread_id}/runs/stream", post(create_stream))
        .route("/threads/{thread_id}/runs/wait", post(create_wait))
        .route("/threads/{thread_id}/runs/{run_id}", get(one).delete(delete))
        .route("/threads/{thread_id}/runs/{run_id}/join", get(join))
        .route("/threads/{thread_id}/runs/{run_id}/stream", get(join_stream))
        .route("/threads/{thread_id}/runs/{run_id}/cancel", post(cancel))
        .route("/runs", post(stateless_create))
        .route("/runs/stream", post(stateless_stream))
        .route("/runs/wait", post(stateless_wait))
}

/// A run request's body; one without an `assistant_id` is unprocessable.
pub(super) fn parse(body: &Bytes) -> Result<RunCreate> {
    let run: RunCreate = body_or_default(body)?;
    if run.assistant_id.is_empty() {
        return Err(ServerError::Unprocessable("`assistant_id` is required".into()));
    }
    Ok(run)
}

fn with_location(mut response: Response, location: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::CONTENT_LOCATION, v);
    }
    response
}

/// Creates a run as `caller` may: on a thread it reaches, stamped with its grant.
pub(super) async fn start(
    app: &Arc<App>,
    caller: &Caller,
    thread_id: Option<&str>,
    request: &RunCreate,
    body: &Bytes,
) -> Result<RunRef> {
    let value = || {
        let mut value: Value = serde_json::from_slice(body).unwrap_or_else(|_| json!({}));
        if let (Value::Object(map), Some(id)) = (&mut value, thread_id) {
            map.insert("thread_id".into(), id.into());
        }
        value
    };
    let grant = caller.grant(Resource::Threads, Action::CreateRun, value).await?;
    app.create_run(thread_id, request, &grant, caller).await
}

async fn create(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(thread_id): Path<String>,
    body: Bytes,
) -> Result<Response> {
    let run = start(&app, &caller, Some(&thread_id), &parse(&body)?, &body).await?;
    let location = run.path();
    Ok(with_location(Json(run.record().to_json()).into_response(), &location))
}

async fn stateless_create(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Response> {
    let run = start(&app, &caller, None, &parse(&body)?, &body).await?;
    let location = run.path();
    Ok(with_location(Json(run.record().to_json()).into_response(), &location))
}

/// Streams a new run; when the client goes away, the run goes on unless `on_disconnect` is
/// `cancel`.
async fn stream_new(
    app: &Arc<App>,
    caller: &Caller,
    thread_id: Option<&str>,
    body: &Bytes,
) -> Result<Response> {
    let request = parse(body)?;
    let cancel_on_drop = request.on_disconnect.as_deref() == Some("cancel");
    let slot = app.streams.open(caller)?;
    let run = start(app, caller, thread_id, &request, body).await?;
    let on_drop = cancel_on_drop.then(|| run.stopper());
    Ok(sse::respond(run.frames(None), Some(run.path()), on_drop, slot))
}

async fn create_stream(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(thread_id): Path<String>,
    body: Bytes,
) -> Result<Response> {
    stream_new(&app, &caller, Some(&thread_id), &body).await
}

async fn stateless_stream(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Response> {
    stream_new(&app, &caller, None, &body).await
}

async fn wait_new(
    app: &Arc<App>,
    caller: &Caller,
    thread_id: Option<&str>,
    body: &Bytes,
) -> Result<Response> {
    let run = start(app, caller, thread_id, &parse(body)?, body).await?;
    let output = run.output().await?;
    Ok(with_location(Json(output).into_response(), &run.path()))
}

async fn create_wait(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(thread_id): Path<String>,
    body: Bytes,
) -> Result<Response> {
    wait_new(&app, &caller, Some(&thread_id), &body).await
}

async fn stateless_wait(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Response> {
    wait_new(&app, &caller, None, &body).await
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ListQuery {
    limit: Count,
    offset: Count,
    status: Option<String>,
}

async fn list(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(thread_id): Path<String>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Vec<Value>>> {
    let paging = app.limits.page(&q.limit, &q.offset, 10)?;
    let grant = caller.thread_grant(Action::Read, &thread_id).await?;
    let runs: Vec<_> = app
        .runs_of(&thread_id, &grant)
        .await?
        .into_iter()
        .filter(|r| q.status.as_deref().is_none_or(|s| s == r.status))
        .collect();
    Ok(Json(page(runs, paging).iter().map(|r| r.to_json()).collect()))
}

async fn one(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path((thread_id, run_id)): Path<(String, String)>,
) -> Result<Json<Value>> {
    let grant = caller.thread_grant(Action::Read, &thread_id).await?;
    Ok(Json(app.run(&thread_id, &run_id, &grant).await?.record().to_json()))
}

async fn delete(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path((thread_id, run_id)): Path<(String, String)>,
) -> Result<StatusCode> {
    let grant = caller.thread_grant(Action::Delete, &thread_id).await?;
    app.delete_run(&thread_id, &run_id, &grant).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn join(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path((thread_id, run_id)): Path<(String, String)>,
) -> Result<Json<Value>> {
    let grant = caller.thread_grant(Action::Read, &thread_id).await?;
    Ok(Json(app.run(&thread_id, &run_id, &grant).await?.output().await?))
}

async fn join_stream(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path((thread_id, run_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response> {
    let grant = caller.thread_grant(Action::Read, &thread_id).await?;
    let run = app.run(&thread_id, &run_id, &grant).await?;
    let slot = app.streams.open(&caller)?;
    Ok(sse::respond(run.frames(sse::last_event_id(&headers).as_deref()), None, None, slot))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CancelQuery {
    /// `true`, `1`, ... as clients spell it.
    wait: Option<String>,
    action: Option<String>,
}

async fn cancel(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path((thread_id, run_id)): Path<(String, String)>,
    Query(q): Query<CancelQuery>,
) -> Result<StatusCode> {
    let grant = caller.thread_grant(Action::Update, &thread_id).await?;
    let how = match q.action.as_deref().unwrap_or("interrupt") {
        "interrupt" => Stop::Interrupt,
        "rollback" => Stop::Rollback,
        other => return Err(ServerError::Unprocessable(format!("unknown cancel action `{other}`"))),
    };
    let run = app.cancel(&thread_id, &run_id, how, &grant).await?;
    if q.wait.as_deref().is_some_and(|w| matches!(w, "1" | "true" | "True")) {
        run.output().await?;
    }
    Ok(StatusCode::ACCEPTED)
}
