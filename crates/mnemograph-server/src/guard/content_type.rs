//! Requires JSON bodies to say so. A page of any origin may send a browser's "simple" request
//! (`text/plain`, a form) without asking the server first; requiring `application/json` on
//! every body makes the browser ask (a CORS preflight), which the server answers only for the
//! origins it allows.

use axum::http::{header, HeaderMap, Method};

use crate::error::{Result, ServerError};

/// Refuses, with 415, a non-empty body on a method that takes one (`POST`, `PUT`, `PATCH`,
/// `DELETE`) unless its `Content-Type` is `application/json` (with any parameters, in any case).
/// An empty body needs none: the SDK clients send some requests without one.
pub(crate) fn check(method: &Method, headers: &HeaderMap, body_len: usize) -> Result<()> {
    if body_len == 0 || !matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE) {
        return Ok(());
    }
    let given = headers.get(header::CONTENT_TYPE);
    let is_json = given
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"));
    if is_json {
        return Ok(());
    }
    let given =
        given.map_or_else(|| "none".to_owned(), |v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    Err(ServerError::UnsupportedMediaType(format!(
        "a request body must be JSON with `Content-Type: application/json`; the Content-Type given is {given}"
    )))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn accepts(method: &Method, content_type: Option<&'static str>, len: usize) -> bool {
        let mut headers = HeaderMap::new();
        if let Some(t) = content_type {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(t));
        }
        check(method, &headers, len).is_ok()
    }

    #[test]
    fn json_bodies_pass_with_parameters_and_in_any_case() {
        assert!(accepts(&Method::POST, Some("application/json"), 2));
        assert!(accepts(&Method::PUT, Some("Application/JSON; charset=utf-8"), 2));
        assert!(accepts(&Method::DELETE, Some("application/json;charset=UTF-8"), 2));
    }

    #[test]
    fn other_bodies_are_refused_and_empty_ones_need_no_type() {
        assert!(!accepts(&Method::POST, Some("text/plain"), 2));
        assert!(!accepts(&Method::POST, Some("application/x-www-form-urlencoded"), 2));
        assert!(!accepts(&Method::PATCH, None, 2));
        assert!(!accepts(&Method::POST, Some("application/jsonp"), 2));
        assert!(accepts(&Method::POST, None, 0));
        assert!(accepts(&Method::POST, Some("text/plain"), 0));
        assert!(accepts(&Method::GET, Some("text/plain"), 2));
    }
}
