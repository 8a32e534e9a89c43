//! Who may call the server, and what each caller may see and change.
//!
//! An [`Auth`] given to [`Server::with_auth`](crate::Server::with_auth) runs on every request
//! but `/ok` and `/info`: [`Auth::authenticate`] turns the request's headers into an
//! [`Identity`] or refuses it with 401, and [`Auth::authorize`] answers each thing the request
//! does with a [`Grant`] or refuses it with 403. A grant's metadata filter applies inside every
//! read, search, count, history, state, join, stream, cancel and delete, in one process and in a
//! cluster's database; what a caller may not see answers exactly as what does not exist. The
//! identity reaches the graph's nodes as LangGraph's `langgraph_auth_user`
//! ([`Identity::of`]) and the run hooks as [`RunContext::identity`](crate::RunContext::identity).
//!
//! By default ([`Auth::authorize`] not overridden) each caller owns what it creates: threads
//! (and so their runs) are stamped `metadata.owner = identity` and filtered by it, the store is
//! confined to the namespace that starts with the identity, and assistants are read and run by
//! all but changed (updated, set to another version, deleted) only by the caller that created
//! them: the graphs' system assistants by none.
//!
//! An assistant's grant applies as a thread's: one the caller may not read answers 404 to a get,
//! a version list, a drawing or a run, exactly as one that does not exist. A graph's system
//! assistant runs for every caller whatever its read grant says, as LangGraph runs it.
//!
//! ```
//! use mnemograph_server::auth::BearerTokens;
//! let tokens = BearerTokens::parse("alice:token-a,bob:token-b")?;
//! // Server::new(saver).with_auth(tokens) ...
//! # Ok::<(), mnemograph_server::ServerError>(())
//! ```

mod access;
mod bearer;
mod caller;
mod identity;

use mnemograph_core::BoxFuture;

pub use access::{Access, Action, Grant, Resource};
/// A request's method, URI, headers and extensions, as [`Auth::authenticate`] reads them.
pub use axum::http::request::Parts;
pub use bearer::BearerTokens;
pub(crate) use caller::{authenticate, Authenticator, Caller};
pub(crate) use identity::is_reserved;
pub use identity::{Identity, AUTH_PERMISSIONS_KEY, AUTH_USER_ID_KEY, AUTH_USER_KEY};

use crate::error::Result;

/// Authentication and authorization: LangGraph's custom `Auth`, its `authenticate` handler and
/// its `on` handlers in one trait.
pub trait Auth: Send + Sync + 'static {
    /// Who sent `request` (its method, URI and headers; the body is not read yet), or
    /// [`ServerError::Unauthorized`](crate::ServerError::Unauthorized) to refuse it with 401.
    fn authenticate<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, Result<Identity>>;

    /// What `user` may do of `access`: a [`Grant`] (everything, or only what matches its
    /// filter), or [`ServerError::Forbidden`](crate::ServerError::Forbidden) to refuse the request with 403.
    ///
    /// By default each caller owns what it creates ([`owner_grant`]).
    fn authorize<'a>(&'a self, user: &'a Identity, access: &'a Access<'a>) -> BoxFuture<'a, Result<Grant>> {
        Box::pin(async move { owner_grant(user, access) })
    }
}

/// Each caller owns what it creates: its threads (and their runs) and crons carry
/// `metadata.owner = identity` and only they are seen; its store items live under the namespace
/// `[identity, ...]`; assistants are read by all and changed by their owner.
///
/// # Errors
/// None today; the signature leaves room for policies that refuse.
pub fn owner_grant(user: &Identity, access: &Access<'_>) -> Result<Grant> {
    let owned = Grant::all().metadata("owner", user.identity.clone());
    Ok(match (access.resource, access.action) {
        (Resource::Store, _) => Grant::all().namespace([user.identity.clone()]),
        (Resource::Assistants, Action::Read | Action::Search) => Grant::all(),
        _ => owned,
    })
}

impl<A: Auth + ?Sized> Auth for std::sync::Arc<A> {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, Result<Identity>> {
        (**self).authenticate(request)
    }

    fn authorize<'a>(&'a self, user: &'a Identity, access: &'a Access<'a>) -> BoxFuture<'a, Result<Grant>> {
        (**self).authorize(user, access)
    }
}
