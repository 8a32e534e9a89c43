//! The crate's error type.

use mnemograph_core::BoxError;

/// `Result` with mnemograph-models' [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure of a model call, a tool lookup or a tokenizer.
///
/// Model errors keep what a caller needs to decide on a retry: the HTTP status of
/// [`Error::Api`], or the kind of transport failure. The OpenAI client (feature `openai`) already
/// retries 429s, 5xx and connect failures (see `OpenAiConfig::max_retries`); what reaches the
/// caller is the last attempt's error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The endpoint answered with an error status (401 bad key, 404 unknown model, 429 rate limit
    /// after the retries, 5xx after the retries, 400 rejected request...).
    #[error("model api returned status {status}: {message}")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The provider's message (the raw body when it is not OpenAI's error JSON).
        message: String,
        /// OpenAI's `error.type`, e.g. `invalid_request_error`.
        kind: Option<String>,
        /// OpenAI's `error.code`, e.g. `invalid_api_key`.
        code: Option<String>,
    },
    /// The endpoint reported an error inside a `200` event stream (vLLM and routers do this).
    #[error("model stream reported an error: {message}")]
    StreamEvent {
        /// The provider's message.
        message: String,
        /// The provider's code, if any.
        code: Option<String>,
    },
    /// The request never got an answer: connection refused, DNS, TLS, timeout.
    #[error("cannot reach the model api")]
    Transport {
        /// What the HTTP client reported.
        #[source]
        source: BoxError,
    },
    /// The event stream broke off (connection reset mid-stream, malformed SSE framing).
    #[error("model stream broke off")]
    Stream {
        /// What the SSE reader reported.
        #[source]
        source: BoxError,
    },
    /// The event stream ended cleanly but before the model finished (no `finish_reason` was
    /// seen): a proxy or server closed the connection early, so the reply is truncated.
    #[error("model stream ended before the reply was complete")]
    StreamIncomplete,
    /// A body or an event was not the JSON the protocol promises.
    #[error("cannot decode the model response")]
    Decode {
        /// The parse failure.
        #[source]
        source: serde_json::Error,
    },
    /// The response decoded but lacks a required part (e.g. no `choices`).
    #[error("model response has no `{0}`")]
    MissingField(&'static str),
    /// A required setting is neither configured nor in the environment.
    #[error("no `{0}` configured or in the environment")]
    MissingConfig(&'static str),
    /// Any other client-side failure (building the request, an HTTP middleware layer).
    #[error("model client failed")]
    Client {
        /// The underlying failure.
        #[source]
        source: BoxError,
    },
    /// A tokenizer name that is not one of the supported encodings.
    #[error("unknown tokenizer encoding `{0}`; use cl100k_base or o200k_base")]
    UnknownEncoding(String),
    /// A tokenizer failed to load its vocabulary.
    #[error("cannot load tokenizer")]
    Tokenizer {
        /// What tiktoken-rs reported.
        #[source]
        source: BoxError,
    },
}

impl Error {
    /// The HTTP status of an [`Error::Api`].
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether retrying the same call later may succeed: rate limits, server errors and
    /// transport or stream failures.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Api { status, .. } => *status == 429 || *status >= 500,
            Self::Transport { .. } | Self::Stream { .. } | Self::StreamIncomplete => true,
            _ => false,
        }
    }
}

#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
impl From<async_openai::error::OpenAIError> for Error {
    fn from(e: async_openai::error::OpenAIError) -> Self {
        use async_openai::error::OpenAIError as E;
        match e {
            E::ApiError(r) => Self::Api {
                status: r.status_code.as_u16(),
                message: r.api_error.message,
                kind: r.api_error.r#type,
                code: r.api_error.code,
            },
            E::Reqwest(source) => Self::Transport { source: Box::new(source) },
            E::JSONDeserialize(source, _) => Self::Decode { source },
            E::StreamError(source) => Self::Stream { source },
            other => Self::Client { source: Box::new(other) },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_classification() {
        let api = |status| Error::Api { status, message: String::new(), kind: None, code: None };
        assert!(api(429).is_retryable());
        assert!(api(503).is_retryable());
        assert!(!api(401).is_retryable());
        assert_eq!(api(401).status(), Some(401));
        assert!(Error::StreamIncomplete.is_retryable());
        assert!(!Error::MissingConfig("OPENAI_API_KEY").is_retryable());
    }
}
