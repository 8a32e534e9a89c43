//! The HTTP routes, grouped as the LangGraph server API groups them.

mod assistants;
mod runs;
mod store;
mod threads;

use std::sync::Arc;

use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::app::App;

/// Every route of the API the server implements.
pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/ok", get(|| async { Json(json!({ "ok": true })) }))
        .route("/info", get(info))
        .merge(assistants::routes())
        .merge(threads::routes())
        .merge(runs::routes())
        .merge(store::routes())
        .with_state(app)
}

async fn info() -> Json<Value> {
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "flags": { "assistants": true, "crons": false },
        "host": { "kind": "self-hosted" },
    }))
}

/// The page of `limit` items after `offset` of a list.
fn page<T>(items: Vec<T>, (limit, offset): (usize, usize)) -> Vec<T> {
    items.into_iter().skip(offset).take(limit).collect()
}

/// Whether `metadata` holds every key and value of `filter`.
fn matches(
    metadata: &serde_json::Map<String, Value>,
    filter: Option<&serde_json::Map<String, Value>>,
) -> bool {
    filter.is_none_or(|f| f.iter().all(|(k, v)| metadata.get(k) == Some(v)))
}

/// `post` with an empty body read as `{}`, as the SDK sends some requests without one.
fn body_or_default<T: serde::de::DeserializeOwned + Default>(bytes: &[u8]) -> Result<T, crate::ServerError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(bytes)
        .map_err(|e| crate::ServerError::BadRequest(format!("invalid request body: {e}")))
}
