//! `/assistants`: one system assistant per registered graph.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::{body_or_default, page};
use crate::app::App;
use crate::assistant::Assistant;
use crate::auth::{Action, Caller, Resource};
use crate::error::{Result, ServerError};
use crate::filter::holds;
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

async fn search(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<Vec<Value>>> {
    let q: Search = body_or_default(&body)?;
    let paging = app.limits.page(&q.limit, &q.offset, 10)?;
    let value = || json!({ "graph_id": q.graph_id, "name": q.name, "metadata": q.metadata });
    let grant = caller.grant(Resource::Assistants, Action::Search, value).await?;
    let found: Vec<Value> = app
        .assistants
        .iter()
        .filter(|a| q.graph_id.as_deref().is_none_or(|g| g == a.graph_id))
        .filter(|a| q.name.as_deref().is_none_or(|n| n == a.graph_id))
        .filter(|a| {
            grant.admits(&a.metadata()) && q.metadata.as_ref().is_none_or(|f| holds(&a.metadata(), f))
        })
        .map(|a| a.to_json())
        .collect();
    Ok(Json(page(found, paging)))
}

/// The assistant `id` names, if the caller may read it; one it may not is not found.
async fn readable<'a>(app: &'a App, caller: &Caller, id: &str) -> Result<&'a Assistant> {
    let assistant = app.assistant(id)?;
    let grant = caller.grant(Resource::Assistants, Action::Read, || json!({ "assistant_id": id })).await?;
    if !grant.admits(&assistant.metadata()) {
        return Err(ServerError::NotFound(format!("Assistant '{id}' not found")));
    }
    Ok(assistant)
}

async fn one(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    Ok(Json(readable(&app, &caller, &id).await?.to_json()))
}

async fn graph(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    Ok(Json(readable(&app, &caller, &id).await?.graph.layout()))
}

async fn schemas(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Result<Json<Value>> {
    Ok(Json(readable(&app, &caller, &id).await?.schemas()))
}
