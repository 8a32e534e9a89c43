//! Operations on several runs or threads at once: `POST /runs/batch` (stateless runs created in
//! the background), `POST /runs/cancel` and `POST /threads/prune`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, Query, State};
use axum::http::StatusCode;
use axum::routing::post;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{json, Value};

use super::body_or_default;
use super::runs::{parse, start};
use crate::app::App;
use crate::auth::{Action, Caller, Resource};
use crate::cancel_many::{self, CancelMany};
use crate::error::{Result, ServerError};
use crate::prune::{self, Prune};
use crate::run::Stop;

pub(super) fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/runs/batch", post(create_batch))
        .route("/runs/cancel", post(cancel_runs))
        .route("/threads/prune", post(prune_threads))
}

/// `POST /runs/batch`: a list of stateless run requests, each created as `POST /runs` creates
/// it; the runs, in the order asked. Every request is read before any run is created, so a
/// malformed one creates none.
async fn create_batch(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<Vec<Value>>> {
    let items = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Array(items)) if !items.is_empty() => items,
        _ => {
            return Err(ServerError::Unprocessable(
                "a batch is a non-empty list of stateless run requests".into(),
            ))
        }
    };
    let requests = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let bytes = Bytes::from(item.to_string());
            let request = parse(&bytes)
                .map_err(|e| ServerError::Unprocessable(format!("run request {i} of the batch: {e}")))?;
            Ok((request, bytes))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut runs = Vec::with_capacity(requests.len());
    for (request, bytes) in &requests {
        runs.push(start(&app, &caller, None, request, bytes).await?.record().to_json());
    }
    Ok(Json(runs))
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ActionQuery {
    action: Option<String>,
}

/// `POST /runs/cancel?action=`: cancels the runs of one thread named by id, or every run of a
/// status, on the threads the caller may update; 204.
async fn cancel_runs(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    Query(q): Query<ActionQuery>,
    body: Bytes,
) -> Result<StatusCode> {
    let asked: CancelMany = body_or_default(&body)?;
    let selection = asked.selection()?;
    // LangGraph reads any other action as `interrupt`.
    let (how, action) = match q.action.as_deref() {
        Some("rollback") => (Stop::Rollback, "rollback"),
        _ => (Stop::Interrupt, "interrupt"),
    };
    let value = || cancel_many::access_value(&selection, action);
    let grant = caller.grant(Resource::Threads, Action::Update, value).await?;
    cancel_many::cancel_many(&app, selection, how, &grant).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /threads/prune`: `{"pruned_count"}`.
async fn prune_threads(
    State(app): State<Arc<App>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Result<Json<Value>> {
    let asked: Prune = body_or_default(&body)?;
    let (ids, strategy) = asked.read()?;
    if ids.is_empty() {
        return Ok(Json(json!({ "pruned_count": 0 })));
    }
    let value = || json!({ "thread_ids": ids });
    let grant = caller.grant(Resource::Threads, Action::Delete, value).await?;
    let pruned = prune::prune(&app, &ids, strategy, &grant).await?;
    Ok(Json(json!({ "pruned_count": pruned })))
}
