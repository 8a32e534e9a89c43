//! `/runs/crons`: create crons (stateless, or on a thread), read, update, delete, search and count
//! them.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use uuid::Uuid;

use crate::app::App;
use crate::auth::{Action, Caller, Grant, Resource};
use crate::cron::{
    check_change, check_runnable, run_request, stamp, stored_payload, utc_now, CronRecord, CronSearch,
    CronSort, NewCron, CRON_FIELDS,
};
use crate::cron_visibility;
use crate::error::{Result, ServerError};
use crate::page::Count;
use crate::request::RunCreate;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/runs/crons", post(create))
        .route("/threads/{thread_id}/runs/crons", post(create_for_thread))
        .route("/runs/crons/search", post(search))
        .route("/runs/crons/count", post(count))
        .route("/runs/crons/{cron_id}", get(one).patch(update).delete(delete))
}

/// A request body as a JSON object, `{}` when empty; anything else is unprocessable, as
/// LangGraph's server answers it.
fn object(bytes: &[u8]) -> Result<Map<String, Value>> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => {
            Err(ServerError::Unprocessable(format!("the request body must be an object, got {other}")))
        }
        Err(e) => Err(ServerError::Unprocessable(format!("invalid request body: {e}"))),
    }
}

/// A cron id from the path; one that is not a UUID is unprocessable, as LangGraph answers it.
fn cron_id(id: &str) -> Result<()> {
    Uuid::parse_str(id)
        .map(|_| ())
        .map_err(|_| ServerError::Unprocessable("Invalid cron ID: must be a UUID".into()))
}

/// An id a search filters by; one that is not a UUID is unprocessable, as LangGraph answers it.
fn filter_id(what: &str, id: Option<&String>) -> Result<()> {
    match id {
        Some(id) if Uuid::parse_str(id).is_err() => {
            Err(ServerError::Unprocessable(format!("Invalid {what} ID: must be a UUID")))
        }
        _ => Ok(()),
    }
}

async fn create(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<Value>> {
    Ok(Json(new_cron(&app, &caller, None, &object(&body)?).await?.to_json()))
}

async fn create_for_thread(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(thread_id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    Ok(Json(new_cron(&app, &caller, Some(&thread_id), &object(&body)?).await?.to_json()))
}

/// Checks and stores a cron as `caller` may make it: its schedule and fields read, its assistant
/// one the caller may run, its thread one the caller may read, and its run request one the
/// server would take now. Nothing is stored when one of these fails.
async fn new_cron(
    app: &App,
    caller: &Caller,
    thread_id: Option<&str>,
    body: &Map<String, Value>,
) -> Result<CronRecord> {
    let now = utc_now();
    let cron = NewCron::check(body, now)?;
    let run: RunCreate = serde_json::from_value(Value::Object(body.clone()))
        .map_err(|e| ServerError::Unprocessable(format!("invalid request body: {e}")))?;
    let value = || {
        let mut value = Value::Object(body.clone());
        if let (Value::Object(map), Some(id)) = (&mut value, thread_id) {
            map.insert("thread_id".into(), id.into());
        }
        value
    };
    let grant = caller.grant(Resource::Crons, Action::Create, value).await?;
    let assistant = check_runnable(app, caller, &run).await?;
    if let Some(thread_id) = thread_id {
        let read = caller.thread_grant(Action::Read, thread_id).await?;
        app.thread(thread_id, &read).await?;
    }
    let cron_id = Uuid::now_v7().to_string();
    let mut metadata = cron.metadata;
    grant.stamp(&mut metadata);
    let created = stamp(now);
    let record = CronRecord {
        payload: stored_payload(body.clone(), &assistant.assistant_id, &cron_id),
        cron_id,
        assistant_id: assistant.assistant_id,
        thread_id: thread_id.map(str::to_owned),
        user: caller.user().cloned(),
        schedule: cron.schedule,
        timezone: cron.timezone,
        next_run_date: cron.next_run_date,
        end_time: cron.end_time,
        metadata,
        on_run_completed: thread_id.is_none().then_some(cron.on_run_completed),
        enabled: cron.enabled,
        created_at: created.clone(),
        updated_at: created,
    };
    app.crons.create(record).await
}

/// What `caller` may do of cron `id` by `action`.
async fn cron_grant(caller: &Caller, action: Action, id: &str) -> Result<Grant> {
    caller.grant(Resource::Crons, action, || json!({ "cron_id": id })).await
}

async fn one(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    cron_id(&id)?;
    let grant = cron_grant(&caller, Action::Read, &id).await?;
    Ok(Json(app.crons.get(&id, &grant).await?.to_json()))
}

/// `PATCH /runs/crons/{id}`: the named fields changed; a new schedule or zone fires next from
/// now. Nothing changes when the cron as changed could not make its runs.
async fn update(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>> {
    cron_id(&id)?;
    let body = object(&body)?;
    let change = check_change(&body, utc_now())?;
    let value = || {
        let mut value = Value::Object(body.clone());
        if let Value::Object(map) = &mut value {
            map.insert("cron_id".into(), id.clone().into());
        }
        value
    };
    let grant = caller.grant(Resource::Crons, Action::Update, value).await?;
    // The cron as the change would leave it must still make a run a tick could make.
    let current = app.crons.get(&id, &grant).await?;
    check_runnable(&app, &caller, &run_request(&change.apply(&current, utc_now())?)?).await?;
    Ok(Json(app.crons.update(&id, &change, &grant).await?.to_json()))
}

async fn delete(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<StatusCode> {
    cron_id(&id)?;
    let grant = cron_grant(&caller, Action::Delete, &id).await?;
    app.crons.delete(&id, &grant).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Search {
    assistant_id: Option<String>,
    thread_id: Option<String>,
    enabled: Option<bool>,
    metadata: Option<Map<String, Value>>,
    limit: Count,
    offset: Count,
    sort_by: Option<String>,
    sort_order: Option<String>,
    select: Option<Vec<String>>,
}

/// The search a request asks for, confined to what the caller may search.
async fn confined(
    caller: &Caller,
    q: &Search,
    body: &Map<String, Value>,
    page: (usize, usize),
) -> Result<CronSearch> {
    filter_id("assistant", q.assistant_id.as_ref())?;
    filter_id("thread", q.thread_id.as_ref())?;
    let descending = match q.sort_order.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(other) => {
            return Err(ServerError::Unprocessable(format!(
                "Invalid sort_order: '{other}'. Must be one of 'asc' or 'desc'"
            )))
        }
    };
    let grant = caller.grant(Resource::Crons, Action::Search, || Value::Object(body.clone())).await?;
    Ok(CronSearch {
        assistant_id: q.assistant_id.clone(),
        thread_id: q.thread_id.clone(),
        enabled: q.enabled,
        metadata: q.metadata.clone().unwrap_or_default(),
        within: grant.filter().clone(),
        sort_by: CronSort::parse(q.sort_by.as_deref())?,
        descending,
        limit: page.0,
        offset: page.1,
    })
}

fn search_body(body: &Map<String, Value>) -> Result<Search> {
    serde_json::from_value(Value::Object(body.clone()))
        .map_err(|e| ServerError::Unprocessable(format!("invalid request body: {e}")))
}

/// `POST /runs/crons/search`: the page asked for, with LangGraph's pagination headers
/// (`X-Pagination-Next` when more follow).
async fn search(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<(HeaderMap, Json<Vec<Value>>)> {
    let body = object(&body)?;
    let q = search_body(&body)?;
    let (limit, offset) = app.limits.page(&q.limit, &q.offset, 10)?;
    let fields = q.select.clone().filter(|s| !s.is_empty());
    if let Some(fields) = &fields {
        let invalid: Vec<&String> = fields.iter().filter(|f| !CRON_FIELDS.contains(&f.as_str())).collect();
        if !invalid.is_empty() {
            return Err(ServerError::Unprocessable(format!(
                "Invalid select columns: {invalid:?}. Expected: {CRON_FIELDS:?}"
            )));
        }
    }
    let search = confined(&caller, &q, &body, (limit, offset)).await?;
    let threads = thread_grant(&caller, &q).await?;
    let (found, more) = cron_visibility::search_visible(&app, &search, &threads).await?;
    let mut headers = HeaderMap::new();
    let (total, next) = match more {
        true => (offset + limit + 1, Some(offset + limit)),
        false => (offset + found.len(), None),
    };
    headers.insert("X-Pagination-Total", HeaderValue::from(total));
    if let Some(next) = next {
        headers.insert("X-Pagination-Next", HeaderValue::from(next));
    }
    Ok((headers, Json(found.iter().map(|c| c.selected(fields.as_deref())).collect())))
}

/// `POST /runs/crons/count`: how many crons a search finds.
async fn count(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<usize>> {
    let body = object(&body)?;
    let q = search_body(&body)?;
    let search = confined(&caller, &q, &body, (0, 0)).await?;
    let threads = thread_grant(&caller, &q).await?;
    Ok(Json(cron_visibility::count_visible(&app, &search, &threads).await?))
}

/// What of threads the caller may see, as LangGraph asks it beside a search of crons: read of the
/// thread the search names, else search.
async fn thread_grant(caller: &Caller, q: &Search) -> Result<Grant> {
    match &q.thread_id {
        Some(id) => caller.thread_grant(Action::Read, id).await,
        None => caller.grant(Resource::Threads, Action::Search, || json!({})).await,
    }
}
