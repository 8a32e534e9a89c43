//! `/threads`: create, read, search, update, delete and copy threads, and read or write their
//! state and history.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use mnemograph_core::checkpoint::ListOptions;
use mnemograph_core::RunConfig;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::body_or_default;
use crate::app::App;
use crate::auth::{Action, Caller, Grant, Resource};
use crate::error::{Result, ServerError};
use crate::page::Count;
use crate::records::{ThreadRecord, ThreadSearch};
use crate::registered::RegisteredGraph;
use crate::thread_updates::ThreadUpdate;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/threads", post(create))
        .route("/threads/search", post(search))
        .route("/threads/count", post(count))
        .route("/threads/{thread_id}", get(one).patch(patch).delete(delete))
        .route("/threads/{thread_id}/copy", post(copy))
        .route("/threads/{thread_id}/state", get(state).post(update_state))
        .route("/threads/{thread_id}/state/checkpoint", post(state_at_body))
        .route("/threads/{thread_id}/state/{checkpoint_id}", get(state_at))
        .route("/threads/{thread_id}/history", get(history_get).post(history))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Create {
    thread_id: Option<String>,
    metadata: Option<Map<String, Value>>,
    if_exists: Option<String>,
}

async fn create(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<Value>> {
    let c: Create = body_or_default(&body)?;
    let value = || json!({ "thread_id": c.thread_id, "metadata": c.metadata, "if_exists": c.if_exists });
    let grant = caller.grant(Resource::Threads, Action::Create, value).await?;
    let thread = app
        .create_thread(c.thread_id, c.metadata.unwrap_or_default(), c.if_exists.as_deref(), &grant)
        .await?;
    Ok(Json(thread.to_json()))
}

/// A thread search with its page read leniently, to be checked against the server's limits.
#[derive(Debug, Default, Deserialize)]
struct Search {
    #[serde(flatten)]
    search: ThreadSearch,
    #[serde(default)]
    limit: Count,
    #[serde(default)]
    offset: Count,
}

async fn search(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<Vec<Value>>> {
    let Search { search: q, limit, offset } = body_or_default(&body)?;
    let (limit, offset) = app.limits.page(&limit, &offset, 10)?;
    let mut q = within(&caller, q, &body).await?;
    (q.limit, q.offset) = (Some(limit), Some(offset));
    Ok(Json(app.search_threads(&q).await?.iter().map(ThreadRecord::to_json).collect()))
}

/// `POST /threads/count`: how many threads a search finds.
async fn count(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<usize>> {
    let q: ThreadSearch = body_or_default(&body)?;
    let q = within(&caller, q, &body).await?;
    Ok(Json(app.count_threads(&q).await?))
}

/// A search confined to the threads the caller may search.
async fn within(caller: &Caller, q: ThreadSearch, body: &[u8]) -> Result<ThreadSearch> {
    let value = || serde_json::from_slice(body).unwrap_or_else(|_| json!({}));
    Ok(q.within(&caller.grant(Resource::Threads, Action::Search, value).await?))
}

async fn one(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let grant = caller.thread_grant(Action::Read, &id).await?;
    Ok(Json(app.thread(&id, &grant).await?.to_json()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Patch {
    metadata: Option<Map<String, Value>>,
}

async fn patch(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let p: Patch = body_or_default(&body)?;
    let value = || json!({ "thread_id": id, "metadata": p.metadata });
    let grant = caller.grant(Resource::Threads, Action::Update, value).await?;
    Ok(Json(app.patch_thread(&id, p.metadata.unwrap_or_default(), &grant).await?.to_json()))
}

async fn delete(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    let grant = caller.thread_grant(Action::Delete, &id).await?;
    app.delete_thread(&id, &grant).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Copying reads the thread and creates another.
async fn copy(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let read = caller.thread_grant(Action::Read, &id).await?;
    let create = caller.grant(Resource::Threads, Action::Create, || json!({ "copy_of": id })).await?;
    Ok(Json(app.copy_thread(&id, &read, &create).await?.to_json()))
}

/// The graph that reads the checkpoints of a thread `grant` reaches; `None` before the thread's
/// first run.
async fn graph_of<'a>(app: &'a App, thread_id: &str, grant: &Grant) -> Result<Option<&'a RegisteredGraph>> {
    let thread = app.thread(thread_id, grant).await?;
    Ok(app.thread_graph(&thread))
}

/// The state of a thread that has no checkpoint yet.
fn empty_state() -> Value {
    json!({
        "values": {}, "next": [], "tasks": [], "metadata": null, "created_at": null,
        "checkpoint": null, "parent_checkpoint": null, "interrupts": [],
        "checkpoint_id": null, "parent_checkpoint_id": null,
    })
}

async fn read_state(
    app: &App,
    caller: &Caller,
    thread_id: &str,
    checkpoint_id: Option<String>,
) -> Result<Json<Value>> {
    let grant = caller.thread_grant(Action::Read, thread_id).await?;
    let Some(assistant) = graph_of(app, thread_id, &grant).await? else { return Ok(Json(empty_state())) };
    let mut config = RunConfig::thread(thread_id);
    if let Some(id) = checkpoint_id {
        config = config.checkpoint_id(id);
    }
    Ok(Json(assistant.graph.state(config).await?.unwrap_or_else(empty_state)))
}

async fn state(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    read_state(&app, &caller, &id, None).await
}

async fn state_at(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path((id, checkpoint)): Path<(String, String)>,
) -> Result<Json<Value>> {
    read_state(&app, &caller, &id, Some(checkpoint)).await
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CheckpointRef {
    checkpoint_id: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct StateAt {
    checkpoint: Option<CheckpointRef>,
}

async fn state_at_body(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let q: StateAt = body_or_default(&body)?;
    read_state(&app, &caller, &id, q.checkpoint.and_then(|c| c.checkpoint_id)).await
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Update {
    values: Option<Value>,
    as_node: Option<String>,
    checkpoint_id: Option<String>,
    checkpoint: Option<CheckpointRef>,
}

async fn update_state(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let u: Update = body_or_default(&body)?;
    let value = || json!({ "thread_id": id, "values": u.values, "as_node": u.as_node });
    let grant = caller.grant(Resource::Threads, Action::Update, value).await?;
    let assistant = graph_of(&app, &id, &grant).await?.ok_or_else(|| {
        ServerError::BadRequest(format!(
            "Thread {id} has no graph yet: run it once before updating its state"
        ))
    })?;
    let values = match u.values {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(ServerError::Unprocessable(format!("`values` must be an object, got {other}")))
        }
    };
    let mut config = RunConfig::thread(id.as_str());
    if let Some(cp) = u.checkpoint_id.or_else(|| u.checkpoint.and_then(|c| c.checkpoint_id)) {
        config = config.checkpoint_id(cp);
    }
    let saved = assistant.graph.update_state(config, values, u.as_node).await?;
    announce_state(&app, assistant, &id).await;
    let address = json!({
        "thread_id": saved.thread_id,
        "checkpoint_ns": saved.checkpoint_ns,
        "checkpoint_id": saved.checkpoint_id,
    });
    Ok(Json(json!({ "checkpoint": address, "configurable": address, "checkpoint_id": saved.checkpoint_id })))
}

/// Tells the thread's streams its new state (`state_update`), as LangGraph's server does after a
/// state update. A state that cannot be read back is not told, rather than failing the update,
/// which is done.
async fn announce_state(app: &App, graph: &RegisteredGraph, thread_id: &str) {
    let state = match graph.graph.state(RunConfig::thread(thread_id)).await {
        Ok(state) => state.unwrap_or_else(empty_state),
        Err(e) => {
            tracing::warn!(thread_id, error = %e, "reading a thread's state after its update failed");
            return;
        }
    };
    let data = json!({ "state": state, "thread_id": thread_id }).to_string().into();
    app.state_updated(ThreadUpdate { thread_id: thread_id.to_owned(), data }).await;
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct History {
    limit: Count,
    before: Option<Value>,
    metadata: Option<Map<String, Value>>,
}

async fn history(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Vec<Value>>> {
    let q: History = body_or_default(&body)?;
    list_history(&app, &caller, &id, q).await
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct HistoryQuery {
    limit: Count,
    before: Option<String>,
}

async fn history_get(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Query(q): Query<HistoryQuery>,
) -> Result<Json<Vec<Value>>> {
    let q = History { limit: q.limit, before: q.before.map(Value::from), metadata: None };
    list_history(&app, &caller, &id, q).await
}

async fn list_history(app: &App, caller: &Caller, thread_id: &str, q: History) -> Result<Json<Vec<Value>>> {
    let limit = app.limits.page_limit(&q.limit, 10)?;
    let grant = caller.thread_grant(Action::Read, thread_id).await?;
    let Some(assistant) = graph_of(app, thread_id, &grant).await? else { return Ok(Json(Vec::new())) };
    let before =
        match q.before {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s),
            Some(v) => v.get("checkpoint_id").and_then(Value::as_str).map(str::to_owned).or_else(|| {
                v.pointer("/configurable/checkpoint_id").and_then(Value::as_str).map(str::to_owned)
            }),
        };
    let mut options = ListOptions::new().limit(limit);
    if let Some(filter) = q.metadata {
        options = options.filter(filter);
    }
    if let Some(before) = before {
        options = options.before(before);
    }
    Ok(Json(assistant.graph.history(RunConfig::thread(thread_id), options).await?))
}
