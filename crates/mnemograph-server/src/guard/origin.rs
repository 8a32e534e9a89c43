//! Refuses changes asked by pages of other origins. A browser sends some cross-origin requests
//! without asking first (a `POST` with no body, a form post), and CORS only keeps the page from
//! reading the answer, not the server from acting on it. Browsers name the page's origin in
//! `Origin` on every such request; SDK clients send none.

use axum::http::{header, HeaderMap, HeaderValue, Method};

use super::cors::Cors;
use super::host::Authority;
use crate::error::{Result, ServerError};

/// Refuses, with 403, a request that may change something (any method but `GET`, `HEAD` and
/// `OPTIONS`) from a page whose origin is neither the server's own nor an allowed one.
///
/// The page is the server's own when the browser says so (`Sec-Fetch-Site: same-origin`) or when
/// its origin names the host the request is addressed to (`asked`).
pub(crate) fn check(
    method: &Method,
    headers: &HeaderMap,
    asked: Option<&Authority>,
    cors: &Cors,
) -> Result<()> {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let Some(origin) = headers.get(header::ORIGIN) else { return Ok(()) };
    let same_origin =
        headers.get("sec-fetch-site").is_some_and(|s| s.as_bytes().eq_ignore_ascii_case(b"same-origin"));
    if same_origin || cors.allows(origin) || names(origin, asked) {
        return Ok(());
    }
    Err(ServerError::CrossOrigin(format!(
        "a page of origin {} may not call this server; its operator allows origins with \
         `Server::cors_origins`",
        String::from_utf8_lossy(origin.as_bytes())
    )))
}

/// Whether `origin` (`scheme://host[:port]`) names the authority the request is addressed to.
fn names(origin: &HeaderValue, asked: Option<&Authority>) -> bool {
    let Some(asked) = asked else { return false };
    let Some((_, authority)) = origin.to_str().ok().and_then(|o| o.split_once("://")) else {
        return false;
    };
    Authority::parse(authority).text() == asked.text()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(
        method: &Method,
        origin: Option<&'static str>,
        site: Option<&'static str>,
        host: &str,
    ) -> bool {
        let mut headers = HeaderMap::new();
        if let Some(o) = origin {
            headers.insert(header::ORIGIN, HeaderValue::from_static(o));
        }
        if let Some(s) = site {
            headers.insert("sec-fetch-site", HeaderValue::from_static(s));
        }
        let cors = Cors::new(["http://localhost:3000".to_owned()]);
        check(method, &headers, Some(&Authority::parse(host)), &cors).is_ok()
    }

    #[test]
    fn foreign_pages_may_read_but_not_change() {
        let host = "localhost:2024";
        assert!(verdict(&Method::POST, None, None, host), "an SDK client names no origin");
        assert!(verdict(&Method::GET, Some("http://evil.example"), None, host));
        assert!(!verdict(&Method::POST, Some("http://evil.example"), None, host));
        assert!(!verdict(&Method::DELETE, Some("null"), None, host));
        assert!(!verdict(&Method::POST, Some("http://evil.example"), Some("cross-site"), host));
    }

    #[test]
    fn the_servers_own_pages_and_allowed_origins_may_change() {
        let host = "localhost:2024";
        assert!(verdict(&Method::POST, Some("http://localhost:2024"), None, host));
        assert!(verdict(&Method::POST, Some("http://localhost:3000"), None, host));
        assert!(verdict(&Method::POST, Some("https://agents.example"), Some("same-origin"), host));
    }
}
