//! Reads a request's body up to the server's cap ([`Limits::max_body_bytes`]), so that a
//! larger one is refused with 413 and a `{"detail"}` body before a route sees it.
//!
//! [`Limits::max_body_bytes`]: crate::Limits::max_body_bytes

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap};
use futures_util::StreamExt;

use crate::error::{Result, ServerError};

/// The whole body, at most `max` bytes: a declared `Content-Length` above it is refused before
/// anything is read, a body that grows past it as soon as it does.
pub(crate) async fn read(headers: &HeaderMap, body: Body, max: usize) -> Result<Bytes> {
    let declared =
        headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large(max));
    }
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| ServerError::BadRequest(format!("the request body could not be read: {e}")))?;
        if bytes.len() + chunk.len() > max {
            return Err(too_large(max));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(bytes))
}

fn too_large(max: usize) -> ServerError {
    ServerError::PayloadTooLarge(format!(
        "the request body is larger than this server's maximum of {max} bytes"
    ))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use futures_util::stream;

    use super::*;

    fn chunked(chunks: usize, size: usize) -> Body {
        let parts = (0..chunks).map(move |_| Ok::<_, std::io::Error>(Bytes::from(vec![b' '; size])));
        Body::from_stream(stream::iter(parts))
    }

    #[tokio::test]
    async fn a_body_without_a_length_is_cut_off_as_it_grows_past_the_cap() {
        let headers = HeaderMap::new();
        let read_all = read(&headers, chunked(4, 256), 1024).await.map(|b| b.len());
        assert_eq!(read_all.ok(), Some(1024));
        let refused = read(&headers, chunked(5, 256), 1024).await.err().map(|e| e.status());
        assert_eq!(refused, Some(axum::http::StatusCode::PAYLOAD_TOO_LARGE));
    }

    #[tokio::test]
    async fn a_declared_length_above_the_cap_is_refused_before_reading() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from_static("2048"));
        let refused = read(&headers, Body::empty(), 1024).await.err().map(|e| e.status());
        assert_eq!(refused, Some(axum::http::StatusCode::PAYLOAD_TOO_LARGE));
    }
}
