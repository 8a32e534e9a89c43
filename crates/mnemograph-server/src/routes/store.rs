//! `/store`: the long-term store the graphs' nodes read and write, over HTTP (put, get, delete,
//! search, list namespaces).

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{Extension, Query, State};
use axum::http::StatusCode;
use axum::routing::{post, put};
use axum::{Json, Router};
use mnemograph_core::store::{Item, ListNamespaces, SearchQuery};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::body_or_default;
use crate::app::App;
use crate::auth::{Action, Caller, Grant, Resource};
use crate::error::{Result, ServerError};
use crate::page::Count;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/store/items", put(put_item).get(get_item).delete(delete_item))
        .route("/store/items/search", post(search))
        .route("/store/namespaces", post(namespaces))
}

fn time(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    mnemograph_core::checkpoint::backend::format_iso(d.as_secs() as i64, d.subsec_micros())
}

fn item_json(item: &Item, score: Option<Option<f64>>) -> Value {
    let mut v = json!({
        "namespace": item.namespace,
        "key": item.key,
        "value": item.value,
        "created_at": time(item.created_at),
        "updated_at": time(item.updated_at),
    });
    if let (Some(score), Value::Object(map)) = (score, &mut v) {
        map.insert("score".into(), score.into());
    }
    v
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Put {
    namespace: Vec<String>,
    key: String,
    value: Value,
    /// Minutes, as the API counts them.
    ttl: Option<f64>,
}

/// What `caller` may do in the store by `action`, asked of what `value` makes.
async fn grant(caller: &Caller, action: Action, value: impl FnOnce() -> Value) -> Result<Grant> {
    caller.grant(Resource::Store, action, value).await
}

/// Refuses a write outside the caller's namespace.
fn check_write(grant: &Grant, namespace: &[String]) -> Result<()> {
    if grant.reaches(namespace) {
        return Ok(());
    }
    Err(ServerError::Forbidden(format!("you may not write to the store namespace {namespace:?}")))
}

async fn put_item(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<StatusCode> {
    let p: Put = body_or_default(&body)?;
    let grant = grant(&caller, Action::Update, || json!({ "namespace": p.namespace, "key": p.key })).await?;
    check_write(&grant, &p.namespace)?;
    // The caller's turn covers the check and the put, so its other puts cannot pass the quota
    // between them.
    let _turn = match caller.user() {
        Some(user) => Some(app.store_writes.turn(&user.identity).await),
        None => None,
    };
    if caller.user().is_some() && app.store.get(&p.namespace, &p.key).await?.is_none() {
        app.limits.check_store_items(app.store.count(grant.prefix()).await?)?;
    }
    let ttl = match p.ttl {
        Some(minutes) if minutes.is_finite() && minutes > 0.0 => {
            Some(Duration::from_secs_f64(minutes * 60.0))
        }
        Some(minutes) => {
            return Err(ServerError::Unprocessable(format!("invalid ttl {minutes}: minutes > 0")))
        }
        // The server's default (`Server::with_store_ttl`) for a put that gives none.
        None => app.retention.store_ttl,
    };
    app.store.put(&p.namespace, &p.key, p.value, ttl).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Get {
    /// Labels joined by `.`.
    namespace: String,
    key: String,
}

fn labels(dotted: &str) -> Vec<String> {
    if dotted.is_empty() {
        Vec::new()
    } else {
        dotted.split('.').map(str::to_owned).collect()
    }
}

async fn get_item(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<Get>,
) -> Result<Json<Value>> {
    let namespace = labels(&q.namespace);
    let grant = grant(&caller, Action::Read, || json!({ "namespace": namespace, "key": q.key })).await?;
    if !grant.reaches(&namespace) {
        return Ok(Json(Value::Null));
    }
    let item = app.store.get(&namespace, &q.key).await?;
    Ok(Json(item.map_or(Value::Null, |i| item_json(&i, None))))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Delete {
    namespace: Vec<String>,
    key: String,
}

async fn delete_item(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<StatusCode> {
    let d: Delete = body_or_default(&body)?;
    let grant = grant(&caller, Action::Delete, || json!({ "namespace": d.namespace, "key": d.key })).await?;
    check_write(&grant, &d.namespace)?;
    app.store.delete(&d.namespace, &d.key).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Search {
    namespace_prefix: Vec<String>,
    filter: Option<Map<String, Value>>,
    query: Option<String>,
    limit: Count,
    offset: Count,
}

async fn search(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<Value>> {
    let s: Search = body_or_default(&body)?;
    let (limit, offset) = app.limits.page(&s.limit, &s.offset, 10)?;
    let value = || json!({ "namespace": s.namespace_prefix, "filter": s.filter, "query": s.query });
    let Some(prefix) = grant(&caller, Action::Search, value).await?.narrow(&s.namespace_prefix) else {
        return Ok(Json(json!({ "items": [] })));
    };
    let mut query = SearchQuery::new().limit(limit).offset(offset);
    if let Some(q) = s.query.filter(|q| !q.is_empty()) {
        query = query.query(q);
    }
    if let Some(f) = s.filter {
        query = query.filter(Value::Object(f));
    }
    let items = app.store.search(&prefix, query).await?;
    let items: Vec<Value> = items.iter().map(|i| item_json(&i.item, Some(i.score))).collect();
    Ok(Json(json!({ "items": items })))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Namespaces {
    prefix: Option<Vec<String>>,
    suffix: Option<Vec<String>>,
    max_depth: Option<usize>,
    limit: Count,
    offset: Count,
}

async fn namespaces(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<Value>> {
    let n: Namespaces = body_or_default(&body)?;
    let (limit, offset) = app.limits.page(&n.limit, &n.offset, 100)?;
    let asked = n.prefix.unwrap_or_default();
    let value = || json!({ "namespace": asked, "suffix": n.suffix, "max_depth": n.max_depth });
    let Some(prefix) = grant(&caller, Action::Search, value).await?.narrow(&asked) else {
        return Ok(Json(json!({ "namespaces": [] })));
    };
    let mut options = ListNamespaces::new().limit(limit).offset(offset);
    if !prefix.is_empty() {
        options = options.prefix(prefix);
    }
    if let Some(s) = n.suffix {
        options = options.suffix(s);
    }
    if let Some(d) = n.max_depth {
        options = options.max_depth(d);
    }
    Ok(Json(json!({ "namespaces": app.store.list_namespaces(options).await? })))
}
