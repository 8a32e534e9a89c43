//! `/assistants`: one system assistant per registered graph.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{body_or_default, matches, page};
use crate::app::App;
use crate::error::Result;
use crate::page::Count;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/assistants/search", post(search))
        .route("/assistants/{assistant_id}", get(one))
        .route("/assistants/{assistant_id}/schemas", get(schemas))
        .route("/assistants/{assistant_id}/graph", get(graph))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Search {
    graph_id: Option<String>,
    name: Option<String>,
    metadata: Option<Map<String, Value>>,
    limit: Count,
    offset: Count,
}

async fn search(State(app): State<Arc<App>>, body: Bytes) -> Result<Json<Vec<Value>>> {
    let q: Search = body_or_default(&body)?;
    let paging = app.limits.page(&q.limit, &q.offset, 10)?;
    let system = Map::from_iter([("created_by".to_owned(), Value::from("system"))]);
    let found: Vec<Value> = app
        .assistants
        .iter()
        .filter(|a| q.graph_id.as_deref().is_none_or(|g| g == a.graph_id))
        .filter(|a| q.name.as_deref().is_none_or(|n| n == a.graph_id))
        .filter(|_| matches(&system, q.metadata.as_ref()))
        .map(|a| a.to_json())
        .collect();
    Ok(Json(page(found, paging)))
}

async fn one(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Json<Value>> {
    Ok(Json(app.assistant(&id)?.to_json()))
}

async fn graph(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Json<Value>> {
    Ok(Json(app.assistant(&id)?.graph.layout()))
}

async fn schemas(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Json<Value>> {
    Ok(Json(app.assistant(&id)?.schemas()))
}
