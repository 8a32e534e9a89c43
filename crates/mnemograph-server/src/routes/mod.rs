//! The HTTP routes, grouped as the LangGraph server API groups them.

mod assistants;
mod bulk;
mod crons;
mod runs;
mod store;
mod thread_streams;
mod threads;

use std::sync::Arc;

use axum::middleware;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

use crate::app::App;
use crate::auth::{authenticate, Authenticator};

/// Every route of the API the server implements; all but `/ok` and `/info` behind `auth`.
pub(crate) fn router(app: Arc<App>, auth: Authenticator) -> Router {
    Router::new()
        .merge(assistants::routes())
        .merge(crons::routes())
        .merge(threads::routes())
        .merge(runs::routes())
        .merge(bulk::routes())
        .merge(thread_streams::routes())
        .merge(store::routes())
        .route_layer(middleware::from_fn_with_state(auth, authenticate))
        .route("/ok", get(|| async { Json(json!({ "ok": true })) }))
        .route("/info", get(info))
        .with_state(app)
}

async fn info() -> Json<Value> {
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "flags": { "assistants": true, "crons": true },
        "host": { "kind": "self-hosted" },
    }))
}

/// The page of `limit` items after `offset` of a list.
fn page<T>(items: Vec<T>, (limit, offset): (usize, usize)) -> Vec<T> {
    items.into_iter().skip(offset).take(limit).collect()
}

/// `post` with an empty body read as `{}`, as the SDK sends some requests without one.
fn body_or_default<T: serde::de::DeserializeOwned + Default>(bytes: &[u8]) -> Result<T, crate::ServerError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    serde_json::from_slice(bytes)
        .map_err(|e| crate::ServerError::BadRequest(format!("invalid request body: {e}")))
}
