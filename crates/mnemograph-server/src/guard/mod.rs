//! The request guard: what every request passes before a route sees it, so that the server is
//! safe to run on a machine with a browser and to expose behind a proxy.
//!
//! In order: the host it is addressed to ([`host`], 421), a CORS preflight answered here
//! ([`cors`]), a change asked by a page of a foreign origin ([`origin`], 403), the body's size
//! ([`body`], 413) and type ([`content_type`], 415). Every refusal is a `{"detail"}` body; the
//! responses to allowed origins carry the CORS headers.

mod body;
mod content_type;
mod cors;
mod host;
mod origin;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;

pub(crate) use host::{Authority, Hosts};

use crate::error::Result;

/// What the guard lets through: set on the [`Server`](crate::Server), fixed once it serves.
#[derive(Debug, Clone, Default)]
pub(crate) struct Policy {
    pub(crate) hosts: Hosts,
    pub(crate) cors_origins: Vec<String>,
}

/// The policy as the middleware applies it.
#[derive(Debug)]
struct Guard {
    hosts: Hosts,
    cors: cors::Cors,
    max_body: usize,
}

/// `router` behind the guard, taking bodies of at most `max_body` bytes.
pub(crate) fn apply(router: Router, policy: Policy, max_body: usize) -> Router {
    let guard = Arc::new(Guard { hosts: policy.hosts, cors: cors::Cors::new(policy.cors_origins), max_body });
    // The guard reads the body under its own cap and answers in JSON; the extractors' limit
    // is set to the same cap.
    router.layer(DefaultBodyLimit::max(max_body)).layer(middleware::from_fn_with_state(guard, guard_request))
}

async fn guard_request(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let asked = host::authority_of(&req);
    if let Err(refused) = guard.hosts.check(asked.as_ref()) {
        return refused.into_response();
    }
    let origin = req.headers().get(header::ORIGIN).cloned();
    if let Some(origin) = origin.as_ref().filter(|_| cors::is_preflight(req.method(), req.headers())) {
        return guard.cors.preflight(origin);
    }
    let mut response = match guard.admit(req, asked.as_ref()).await {
        Ok(req) => next.run(req).await,
        Err(refused) => refused.into_response(),
    };
    guard.cors.decorate(&mut response, origin.as_ref());
    response
}

impl Guard {
    /// The request with its body read, when its origin, size and type pass.
    async fn admit(&self, req: Request, asked: Option<&Authority>) -> Result<Request> {
        let (parts, body) = req.into_parts();
        origin::check(&parts.method, &parts.headers, asked, &self.cors)?;
        let bytes = body::read(&parts.headers, body, self.max_body).await?;
        content_type::check(&parts.method, &parts.headers, bytes.len())?;
        Ok(Request::from_parts(parts, Body::from(bytes)))
    }
}
