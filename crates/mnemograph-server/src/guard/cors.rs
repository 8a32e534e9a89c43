//! [`Cors`]: which browser origins other than the server's own may call the API, and the CORS
//! headers that tell browsers so. Off unless origins are listed (`Server::cors_origins`).

use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::ServerError;

/// The methods the API serves.
const METHODS: &str = "GET, POST, PUT, PATCH, DELETE";

/// The request headers the SDK clients send (`x-api-key`, `content-type`, `last-event-id` on a
/// reconnect, `accept` and `cache-control` on a stream, `prefer` on a thread delete) and the one
/// bearer authentication uses.
const REQUEST_HEADERS: &str =
    "accept, authorization, cache-control, content-type, last-event-id, prefer, x-api-key";

/// The response headers a page may read: where a run's join stream and record are.
const EXPOSED_HEADERS: &str = "content-location, location, x-pagination-total";

/// How long a browser may reuse a preflight's answer, in seconds: an hour.
const MAX_AGE: &str = "3600";

/// The origins allowed to call the API from a browser, lowercased, without a trailing `/`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cors {
    origins: Vec<String>,
}

impl Cors {
    pub(crate) fn new(origins: impl IntoIterator<Item = String>) -> Self {
        Self { origins: origins.into_iter().map(|o| normalize(&o)).filter(|o| !o.is_empty()).collect() }
    }

    /// Whether pages of `origin` (an `Origin` header) may call the API.
    pub(crate) fn allows(&self, origin: &HeaderValue) -> bool {
        origin.to_str().is_ok_and(|o| self.origins.contains(&normalize(o)))
    }

    /// Whether any origin is listed.
    fn is_on(&self) -> bool {
        !self.origins.is_empty()
    }

    /// The answer to a preflight request from `origin`: 204 with the CORS headers when the
    /// origin is allowed, 403 without them (so the browser refuses) when it is not.
    pub(crate) fn preflight(&self, origin: &HeaderValue) -> Response {
        if !self.allows(origin) {
            let detail = format!(
                "origin {} may not call this server from a browser; its operator allows origins \
                 with `Server::cors_origins`",
                String::from_utf8_lossy(origin.as_bytes())
            );
            let mut response = ServerError::CrossOrigin(detail).into_response();
            self.vary(response.headers_mut());
            return response;
        }
        let mut response = StatusCode::NO_CONTENT.into_response();
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(METHODS));
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static(REQUEST_HEADERS));
        headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(MAX_AGE));
        self.vary(headers);
        response
    }

    /// Adds the CORS headers to the response to a request from an allowed `origin`, and
    /// `Vary: Origin` to every response once CORS is on, so that caches keep one answer per
    /// origin.
    pub(crate) fn decorate(&self, response: &mut Response, origin: Option<&HeaderValue>) {
        let headers = response.headers_mut();
        self.vary(headers);
        if let Some(origin) = origin.filter(|o| self.allows(o)) {
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
            headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED_HEADERS));
        }
    }

    fn vary(&self, headers: &mut HeaderMap) {
        if self.is_on() {
            headers.append(header::VARY, HeaderValue::from_static("origin"));
        }
    }
}

/// Whether `method` and `headers` make a CORS preflight request.
pub(crate) fn is_preflight(method: &Method, headers: &HeaderMap) -> bool {
    method == Method::OPTIONS
        && headers.contains_key(header::ORIGIN)
        && headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// An origin as compared: lowercased, without a trailing `/`.
fn normalize(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_origins_match_regardless_of_case_and_trailing_slash() {
        let cors = Cors::new(["https://App.Example.com/".to_owned()]);
        assert!(cors.allows(&HeaderValue::from_static("https://app.example.com")));
        assert!(!cors.allows(&HeaderValue::from_static("http://app.example.com")));
        assert!(!cors.allows(&HeaderValue::from_static("https://app.example.com:8443")));
        assert!(!Cors::default().allows(&HeaderValue::from_static("null")));
    }
}
