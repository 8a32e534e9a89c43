//! [`Caller`]: the identity a request was authenticated as, and the middleware that finds it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::{Access, Action, Auth, Grant, Identity, Resource};
use crate::error::Result;

/// The server's authentication, when it has one.
pub(crate) type Authenticator = Option<Arc<dyn Auth>>;

/// Who made a request, as every route learns it.
#[derive(Clone)]
pub(crate) struct Caller {
    user: Option<Identity>,
    auth: Authenticator,
}

impl Caller {
    /// A caller of a server without authentication: granted everything.
    pub(crate) fn anonymous() -> Self {
        Self { user: None, auth: None }
    }

    /// The caller a cron's runs run as: the cron's maker (`None` when the server had no
    /// authentication then), authorized by the server's `auth` as the maker's requests are.
    pub(crate) fn scheduled(user: Option<Identity>, auth: Authenticator) -> Self {
        Self { user, auth }
    }

    /// The authenticated caller; `None` on a server without authentication.
    pub(crate) fn user(&self) -> Option<&Identity> {
        self.user.as_ref()
    }

    /// What this caller may do of `resource` by `action`, the request's words being what `value`
    /// makes: it is made only when there is an `Auth` to read it.
    pub(crate) async fn grant(
        &self,
        resource: Resource,
        action: Action,
        value: impl FnOnce() -> Value,
    ) -> Result<Grant> {
        match (&self.auth, &self.user) {
            (Some(auth), Some(user)) => {
                let value = value();
                auth.authorize(user, &Access { resource, action, value: &value }).await
            }
            _ => Ok(Grant::all()),
        }
    }

    /// `grant` for a request that names only a thread.
    pub(crate) async fn thread_grant(&self, action: Action, thread_id: &str) -> Result<Grant> {
        self.grant(Resource::Threads, action, || serde_json::json!({ "thread_id": thread_id })).await
    }
}

/// Authenticates a request when the server has an [`Auth`]: the request goes on with its
/// [`Caller`], or is refused with the authenticator's error (401) and a `WWW-Authenticate`
/// challenge.
pub(crate) async fn authenticate(State(auth): State<Authenticator>, req: Request, next: Next) -> Response {
    let Some(auth) = auth else {
        let mut req = req;
        req.extensions_mut().insert(Caller::anonymous());
        return next.run(req).await;
    };
    let (mut parts, body) = req.into_parts();
    match auth.authenticate(&parts).await {
        Ok(user) => {
            parts.extensions.insert(Caller { user: Some(user), auth: Some(auth) });
            next.run(Request::from_parts(parts, body)).await
        }
        Err(refused) => {
            let status = refused.status();
            let mut response = refused.into_response();
            if status.as_u16() == 401 {
                response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            response
        }
    }
}
