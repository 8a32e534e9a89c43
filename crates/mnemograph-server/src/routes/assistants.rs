//! `/assistants`: create, read, update (a new version each time), delete, search and count
//! assistants, list an assistant's versions and set one latest, and read its graph's schemas,
//! drawing and subgraphs.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use uuid::Uuid;

use crate::app::App;
use crate::assistant::{select, AssistantRecord, ASSISTANT_FIELDS};
use crate::assistant_change::AssistantChange;
use crate::assistant_search::{descending, AssistantSearch, SortBy, VersionSearch};
use crate::auth::{Action, Caller, Resource};
use crate::cancel_many::{self, Selection};
use crate::error::{assistant_not_found, Result, ServerError};
use crate::keeper::CronsOf;
use crate::page::Count;
use crate::records::ThreadSearch;
use crate::run::Stop;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/assistants", post(create))
        .route("/assistants/search", post(search))
        .route("/assistants/count", post(count))
        .route("/assistants/{assistant_id}", get(one).patch(update).delete(delete))
        .route("/assistants/{assistant_id}/versions", post(versions))
        .route("/assistants/{assistant_id}/latest", post(set_latest))
        .route("/assistants/{assistant_id}/schemas", get(schemas))
        .route("/assistants/{assistant_id}/graph", get(graph))
        .route("/assistants/{assistant_id}/subgraphs", get(subgraphs))
        .route("/assistants/{assistant_id}/subgraphs/{namespace}", get(subgraphs))
}

/// A request body as `T`, `{}` when empty; a body that does not fit the schema is unprocessable,
/// as LangGraph's server answers it.
fn body_as<T: DeserializeOwned + Default>(bytes: &[u8]) -> Result<T> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ServerError::Unprocessable(format!("invalid request body: {e}")))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Create {
    assistant_id: Option<String>,
    graph_id: Option<String>,
    config: Option<Map<String, Value>>,
    context: Option<Map<String, Value>>,
    metadata: Option<Map<String, Value>>,
    if_exists: Option<String>,
    name: Option<String>,
    description: Option<String>,
}

async fn create(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<Value>> {
    let c: Create = body_as(&body)?;
    if let Some(id) = &c.assistant_id {
        Uuid::parse_str(id)
            .map_err(|_| ServerError::Unprocessable("Invalid assistant ID: must be a UUID".into()))?;
    }
    let graph_id =
        c.graph_id.clone().ok_or_else(|| ServerError::Unprocessable("`graph_id` is required".into()))?;
    app.graph(&graph_id)?;
    let do_nothing = match c.if_exists.as_deref().unwrap_or("raise") {
        "raise" => false,
        "do_nothing" => true,
        other => {
            return Err(ServerError::Unprocessable(format!(
                "unknown if_exists `{other}`: expected raise or do_nothing"
            )))
        }
    };
    let value = || serde_json::from_slice(&body).unwrap_or_else(|_| json!({}));
    let grant = caller.grant(Resource::Assistants, Action::Create, value).await?;
    let change = AssistantChange::new(None, c.config, c.context, c.metadata, c.name, c.description)?;
    let id = c.assistant_id.unwrap_or_else(|| Uuid::new_v4().to_string());
    let mut record = change.create(id, graph_id);
    grant.stamp(&mut record.metadata);
    Ok(Json(app.assistants.create(record, do_nothing, &grant).await?.to_json()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Search {
    graph_id: Option<String>,
    name: Option<String>,
    metadata: Option<Map<String, Value>>,
    limit: Count,
    offset: Count,
    sort_by: Option<String>,
    sort_order: Option<String>,
    select: Option<Vec<String>>,
}

/// The search a request asks for, confined to what the caller may search.
async fn confined(
    app: &App,
    caller: &Caller,
    q: &Search,
    body: &[u8],
    page: (usize, usize),
) -> Result<AssistantSearch> {
    if let Some(graph_id) = &q.graph_id {
        app.graph(graph_id)?;
    }
    let value = || serde_json::from_slice(body).unwrap_or_else(|_| json!({}));
    let grant = caller.grant(Resource::Assistants, Action::Search, value).await?;
    Ok(AssistantSearch {
        graph_id: q.graph_id.clone(),
        name: q.name.clone(),
        metadata: q.metadata.clone().unwrap_or_default(),
        within: grant.filter().clone(),
        sort_by: SortBy::parse(q.sort_by.as_deref())?,
        descending: descending(q.sort_order.as_deref())?,
        limit: page.0,
        offset: page.1,
    })
}

/// `POST /assistants/search`: the page asked for, with LangGraph's pagination headers
/// (`X-Pagination-Next` when more follow).
async fn search(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<(HeaderMap, Json<Vec<Value>>)> {
    let q: Search = body_as(&body)?;
    let (limit, offset) = app.limits.page(&q.limit, &q.offset, 10)?;
    let fields = q.select.clone().filter(|s| !s.is_empty());
    if let Some(fields) = &fields {
        let invalid: Vec<&String> =
            fields.iter().filter(|f| !ASSISTANT_FIELDS.contains(&f.as_str())).collect();
        if !invalid.is_empty() {
            return Err(ServerError::Unprocessable(format!(
                "Invalid select columns: {invalid:?}. Expected: {ASSISTANT_FIELDS:?}"
            )));
        }
    }
    let search = confined(&app, &caller, &q, &body, (limit, offset)).await?;
    let (found, more) = app.assistants.search(&search).await?;
    let mut headers = HeaderMap::new();
    let (total, next) = match more {
        true => (offset + limit + 1, Some(offset + limit)),
        false => (offset + found.len(), None),
    };
    headers.insert("X-Pagination-Total", HeaderValue::from(total));
    if let Some(next) = next {
        headers.insert("X-Pagination-Next", HeaderValue::from(next));
    }
    let shown = found.iter().map(|a| select(a.to_json(), fields.as_deref())).collect();
    Ok((headers, Json(shown)))
}

/// `POST /assistants/count`: how many assistants a search finds.
async fn count(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<usize>> {
    let q: Search = body_as(&body)?;
    let search = confined(&app, &caller, &q, &body, (0, 0)).await?;
    Ok(Json(app.assistants.count(&search).await?))
}

/// The assistant `id` names, if the caller may read it and its graph is served here; one it
/// may not read is not found.
async fn readable(app: &App, caller: &Caller, id: &str) -> Result<AssistantRecord> {
    let id = app.assistant_id(id)?;
    let grant = caller.grant(Resource::Assistants, Action::Read, || json!({ "assistant_id": id })).await?;
    let assistant = app.assistants.get(&id, &grant).await?;
    app.graph(&assistant.graph_id).map_err(|_| assistant_not_found(&id))?;
    Ok(assistant)
}

async fn one(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    Ok(Json(readable(&app, &caller, &id).await?.to_json()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Update {
    graph_id: Option<String>,
    config: Option<Map<String, Value>>,
    context: Option<Map<String, Value>>,
    metadata: Option<Map<String, Value>>,
    name: Option<String>,
    description: Option<String>,
}

/// `PATCH /assistants/{id}`: the next version, made the latest.
async fn update(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let id = app.assistant_id(&id)?;
    let u: Update = body_as(&body)?;
    if let Some(graph_id) = &u.graph_id {
        app.graph(graph_id)?;
    }
    let value = || {
        let mut value: Value = serde_json::from_slice(&body).unwrap_or_else(|_| json!({}));
        if let Value::Object(map) = &mut value {
            map.insert("assistant_id".into(), id.clone().into());
        }
        value
    };
    let grant = caller.grant(Resource::Assistants, Action::Update, value).await?;
    let change = AssistantChange::new(u.graph_id, u.config, u.context, u.metadata, u.name, u.description)?;
    Ok(Json(app.assistants.update(&id, &change, &grant).await?.to_json()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Delete {
    delete_threads: Option<String>,
}

/// `DELETE /assistants/{id}` with its crons, its runs in progress interrupted, as LangGraph
/// deletes them, and with `?delete_threads=true` the threads it ran on that the
/// caller may delete.
async fn delete(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Query(q): Query<Delete>,
) -> Result<StatusCode> {
    let id = app.assistant_id(&id)?;
    let grant = caller.grant(Resource::Assistants, Action::Delete, || json!({ "assistant_id": id })).await?;
    // Not found, or not the caller's to delete, before any of its runs is touched.
    app.assistants.get(&id, &grant).await?;
    interrupt_runs_of(&app, &caller, &id).await?;
    app.assistants.delete(&id, &grant).await?;
    app.crons.forget(CronsOf::Assistant(&id)).await?;
    if q.delete_threads.is_some_and(|d| d.eq_ignore_ascii_case("true")) {
        delete_threads_of(&app, &caller, &id).await?;
    }
    Ok(StatusCode::NO_CONTENT)
}

/// Interrupts the assistant's runs pending or running on the threads the caller may update, as
/// LangGraph does before it deletes an assistant: no run outlives its assistant.
async fn interrupt_runs_of(app: &App, caller: &Caller, assistant_id: &str) -> Result<()> {
    let selection = Selection::Assistant(assistant_id.to_owned());
    let value = || cancel_many::access_value(&selection, "interrupt");
    let grant = caller.grant(Resource::Threads, Action::Update, value).await?;
    cancel_many::cancel_many(app, selection, Stop::Interrupt, &grant).await
}

/// Deletes the threads whose metadata names the assistant, those the caller may delete; the
/// others stay, as LangGraph skips them.
async fn delete_threads_of(app: &App, caller: &Caller, assistant_id: &str) -> Result<()> {
    let grant =
        caller.grant(Resource::Threads, Action::Delete, || json!({ "assistant_id": assistant_id })).await?;
    let metadata = Map::from_iter([("assistant_id".to_owned(), Value::from(assistant_id))]);
    let q =
        ThreadSearch { metadata: Some(metadata), limit: Some(100), ..ThreadSearch::default() }.within(&grant);
    loop {
        let found = app.search_threads(&q).await?;
        if found.is_empty() {
            return Ok(());
        }
        for thread in found {
            app.delete_thread(&thread.thread_id, &grant).await?;
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Versions {
    metadata: Option<Map<String, Value>>,
    limit: Count,
    offset: Count,
}

/// `POST /assistants/{id}/versions`: its versions, newest first; none is not found, as LangGraph
/// answers it.
async fn versions(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Vec<Value>>> {
    let id = app.assistant_id(&id)?;
    let v: Versions = body_as(&body)?;
    let (limit, offset) = app.limits.page(&v.limit, &v.offset, 10)?;
    let grant = caller.grant(Resource::Assistants, Action::Read, || json!({ "assistant_id": id })).await?;
    let q = VersionSearch { metadata: v.metadata.unwrap_or_default(), limit, offset };
    let found = app.assistants.versions(&id, &q, &grant).await?;
    if found.is_empty() {
        return Err(assistant_not_found(&id));
    }
    Ok(Json(found.iter().map(AssistantRecord::version_json).collect()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Latest {
    version: Option<i64>,
}

/// `POST /assistants/{id}/latest`: makes one of its versions the latest.
async fn set_latest(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    let id = app.assistant_id(&id)?;
    let l: Latest = body_as(&body)?;
    let version = l.version.ok_or_else(|| ServerError::Unprocessable("`version` is required".into()))?;
    let value = || json!({ "assistant_id": id, "version": version });
    let grant = caller.grant(Resource::Assistants, Action::Update, value).await?;
    Ok(Json(app.assistants.set_latest(&id, version, &grant).await?.to_json()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Drawing {
    xray: Option<String>,
}

/// `GET /assistants/{id}/graph`, with subgraphs opened `xray` levels deep: `true` opens every
/// level, `false` none, a positive number that many; anything else is unprocessable, as LangGraph
/// reads it.
async fn graph(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    Query(q): Query<Drawing>,
) -> Result<Json<Value>> {
    let xray = match q.xray.as_deref() {
        None | Some("" | "false" | "False") => 0,
        Some("true" | "True") => usize::MAX,
        Some(depth) => match depth.parse::<usize>() {
            Ok(depth) if depth > 0 => depth,
            _ => return Err(ServerError::Unprocessable("Invalid xray value".into())),
        },
    };
    let assistant = readable(&app, &caller, &id).await?;
    Ok(Json(app.graph(&assistant.graph_id)?.graph.layout(xray)))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Subgraphs {
    recurse: Option<String>,
}

/// `GET /assistants/{id}/subgraphs[/{namespace}]`: the schemas of the graph's subgraphs by
/// namespace (`recurse=true` for nested ones), or of the one at `namespace`; `{}` when there is
/// none.
async fn subgraphs(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(params): Path<Vec<(String, String)>>,
    Query(q): Query<Subgraphs>,
) -> Result<Json<Value>> {
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let id = param("assistant_id").unwrap_or_default();
    // LangGraph reads only these two spellings as true.
    let recurse = matches!(q.recurse.as_deref(), Some("true" | "True"));
    let assistant = readable(&app, &caller, id).await?;
    let graph = app.graph(&assistant.graph_id)?;
    let schemas = graph.subgraph_schemas();
    let found = graph.graph.subgraphs(param("namespace"), recurse);
    Ok(Json(Value::Object(found.into_iter().map(|ns| (ns, schemas.clone())).collect())))
}

async fn schemas(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    let assistant = readable(&app, &caller, &id).await?;
    Ok(Json(app.graph(&assistant.graph_id)?.schemas()))
}
