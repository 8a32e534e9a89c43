//! [`BearerTokens`]: a static table of bearer tokens, each naming one caller.

use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use mnemograph_core::BoxFuture;

use super::{Auth, Identity};
use crate::error::{Result, ServerError};

/// Authenticates requests by `Authorization: Bearer <token>` against a fixed table of tokens,
/// each naming the caller it belongs to. Authorization is the default: each caller owns what it
/// creates ([`owner_grant`](super::owner_grant)).
///
/// Tokens are compared in time that does not depend on how much of a token matches.
#[derive(Clone)]
pub struct BearerTokens {
    tokens: Vec<(Vec<u8>, Identity)>,
}

impl std::fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let users: Vec<&str> = self.tokens.iter().map(|(_, u)| u.identity.as_str()).collect();
        f.debug_struct("BearerTokens").field("users", &users).finish_non_exhaustive()
    }
}

impl BearerTokens {
    /// A table of `(identity, token)` pairs.
    ///
    /// # Errors
    /// [`ServerError::Misconfigured`] when an identity or token is empty, a token has
    /// whitespace, or two entries share a token.
    pub fn new<I, U, T>(pairs: I) -> Result<Self>
    where
        I: IntoIterator<Item = (U, T)>,
        U: Into<String>,
        T: Into<String>,
    {
        let mut tokens: Vec<(Vec<u8>, Identity)> = Vec::new();
        for (user, token) in pairs {
            let (user, token) = (user.into(), token.into());
            if user.trim().is_empty() {
                return Err(ServerError::Misconfigured("a bearer token names no user".into()));
            }
            if token.is_empty() || token.chars().any(char::is_whitespace) {
                return Err(ServerError::Misconfigured(format!(
                    "the bearer token of `{user}` is empty or has whitespace"
                )));
            }
            if tokens.iter().any(|(t, _)| t.as_slice() == token.as_bytes()) {
                return Err(ServerError::Misconfigured(format!(
                    "`{user}` shares its bearer token with another user"
                )));
            }
            tokens.push((token.into_bytes(), Identity::new(user.trim())));
        }
        Ok(Self { tokens })
    }

    /// A table written `user:token,user:token` (as the `AUTH_TOKENS` environment variable of the
    /// example server takes it).
    ///
    /// # Errors
    /// [`ServerError::Misconfigured`] for an entry without `:`, and as [`BearerTokens::new`].
    pub fn parse(table: &str) -> Result<Self> {
        let pairs = table
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                entry.split_once(':').ok_or_else(|| {
                    ServerError::Misconfigured(format!(
                        "`{}...` is not `user:token`",
                        entry.chars().take(3).collect::<String>()
                    ))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        if pairs.is_empty() {
            return Err(ServerError::Misconfigured("the bearer token table is empty".into()));
        }
        Self::new(pairs)
    }

    /// The caller whose token is `presented`.
    fn lookup(&self, presented: &[u8]) -> Option<&Identity> {
        let mut found = None;
        for (token, user) in &self.tokens {
            if same(token, presented) {
                found = Some(user);
            }
        }
        found
    }
}

/// Whether two byte strings are equal, in time that depends only on their lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

impl Auth for BearerTokens {
    fn authenticate<'a>(&'a self, request: &'a Parts) -> BoxFuture<'a, Result<Identity>> {
        let found = request
            .headers
            .get(AUTHORIZATION)
            .ok_or("no `Authorization: Bearer <token>` header")
            .and_then(|v| v.to_str().map_err(|_| "an `Authorization` header that is not text"))
            .and_then(|v| {
                let (scheme, token) = v
                    .trim()
                    .split_once(' ')
                    .ok_or("an `Authorization` header that is not `Bearer <token>`")?;
                if !scheme.eq_ignore_ascii_case("bearer") {
                    return Err("an `Authorization` header that is not `Bearer <token>`");
                }
                self.lookup(token.trim().as_bytes()).ok_or("an unknown bearer token")
            })
            .cloned()
            .map_err(|why| ServerError::Unauthorized(format!("not authenticated: {why}")));
        Box::pin(std::future::ready(found))
    }
}

#[cfg(test)]
mod tests {
    use axum::http::Request;

    use super::*;

    fn parts(authorization: Option<&str>) -> Parts {
        let mut req = Request::builder().uri("/threads/search");
        if let Some(v) = authorization {
            req = req.header(AUTHORIZATION, v);
        }
        req.body(()).map(|r| r.into_parts().0).unwrap_or_else(|e| panic!("request: {e}"))
    }

    #[tokio::test]
    async fn a_known_token_names_its_user_and_anything_else_is_refused() {
        let tokens = BearerTokens::parse("alice:token-a, bob:token-b").unwrap();
        let alice = tokens.authenticate(&parts(Some("Bearer token-a"))).await.unwrap();
        assert_eq!(alice.identity, "alice");
        let bob = tokens.authenticate(&parts(Some("bearer  token-b"))).await.unwrap();
        assert_eq!(bob.identity, "bob");
        for bad in
            [None, Some("Bearer token-c"), Some("Basic token-a"), Some("token-a"), Some("Bearer token-a2")]
        {
            let refused = tokens.authenticate(&parts(bad)).await.err().map(|e| e.status().as_u16());
            assert_eq!(refused, Some(401), "{bad:?}");
        }
    }

    #[test]
    fn a_malformed_table_is_refused() {
        for bad in ["", "alice", "alice:", ":token", "alice:t,bob:t", "alice:a b"] {
            assert!(matches!(BearerTokens::parse(bad), Err(ServerError::Misconfigured(_))), "{bad}");
        }
    }
}
