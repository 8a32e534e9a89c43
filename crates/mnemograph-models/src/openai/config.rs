//! [`OpenAiConfig`]: where and how to reach an OpenAI-compatible endpoint, and the HTTP client
//! built from it that the chat model and the embeddings share.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_openai::config::OpenAIConfig as ClientConfig;
use async_openai::middleware::retry::OpenAIRetryLayer;
use async_openai::middleware::ReqwestService;
use async_openai::Client;
use serde_json::{Map, Value};
use tower::Layer;

use crate::error::{Error, Result};

/// Where and how to reach an OpenAI-compatible endpoint.
///
/// [`from_env`](Self::from_env) reads `OPENAI_API_KEY`, `OPENAI_BASE_URL` and `OPENAI_MODEL`;
/// the builders override any of it.
///
/// ```
/// use mnemograph_models::OpenAiConfig;
///
/// let config = OpenAiConfig::new("qwen2.5:7b").with_base_url("http://127.0.0.1:11434/v1").with_max_retries(0);
/// assert_eq!(config.model, "qwen2.5:7b");
/// assert!(!format!("{config:?}").contains("sk-"));
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
#[derive(Clone)]
#[non_exhaustive]
pub struct OpenAiConfig {
    /// Bearer key; `None` sends none (local servers usually need none).
    pub api_key: Option<String>,
    /// Base URL up to and including `/v1`.
    pub base_url: String,
    /// Model name sent with each request.
    pub model: String,
    /// Retries after a 429, a 5xx or a failed connect, with exponential backoff from 100 ms
    /// (or the server's `Retry-After`). Default 2, like the OpenAI SDKs.
    pub max_retries: usize,
    /// Time allowed to connect. Default 10 s.
    pub connect_timeout: Duration,
    /// Longest silence allowed while reading a reply or between stream events. Default 120 s.
    pub read_timeout: Duration,
    /// Ask for usage on streams (`stream_options.include_usage`). Default on; turn it off for
    /// servers that reject the option.
    pub stream_usage: bool,
    /// Send `reasoning_content` of earlier AI messages back (DeepSeek's thinking-with-tools
    /// mode needs it; other providers reject it). Default off.
    pub send_reasoning_content: bool,
    /// Extra body keys for every request.
    pub extra_body: Map<String, Value>,
}

/// OpenAI's public endpoint, the default base URL.
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

impl OpenAiConfig {
    /// A config for `model` at OpenAI with no key.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            api_key: None,
            base_url: OPENAI_BASE_URL.to_owned(),
            model: model.into(),
            max_retries: 2,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(120),
            stream_usage: true,
            send_reasoning_content: false,
            extra_body: Map::new(),
        }
    }

    /// A config from `OPENAI_MODEL`, `OPENAI_BASE_URL` (default OpenAI's) and `OPENAI_API_KEY`.
    ///
    /// # Errors
    /// [`Error::MissingConfig`] when `OPENAI_MODEL` is unset.
    pub fn from_env() -> Result<Self> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let model = var("OPENAI_MODEL").ok_or(Error::MissingConfig("OPENAI_MODEL"))?;
        let mut config = Self::new(model);
        config.api_key = var("OPENAI_API_KEY");
        if let Some(url) = var("OPENAI_BASE_URL") {
            config.base_url = url;
        }
        Ok(config)
    }

    /// Sets the key.
    #[must_use]
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }
    /// Sets the base URL (up to `/v1`).
    #[must_use]
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into().trim_end_matches('/').to_owned();
        self
    }
    /// Sets the model.
    #[must_use]
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }
    /// Sets the retry count.
    #[must_use]
    pub fn with_max_retries(mut self, retries: usize) -> Self {
        self.max_retries = retries;
        self
    }
    /// Sets the read timeout.
    #[must_use]
    pub fn with_read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = timeout;
        self
    }
    /// Sets whether streams ask for usage.
    #[must_use]
    pub fn with_stream_usage(mut self, on: bool) -> Self {
        self.stream_usage = on;
        self
    }
    /// Sets whether earlier `reasoning_content` is sent back.
    #[must_use]
    pub fn with_send_reasoning_content(mut self, on: bool) -> Self {
        self.send_reasoning_content = on;
        self
    }
    /// Adds a body key sent with every request.
    #[must_use]
    pub fn with_extra_body(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra_body.insert(key.into(), value);
        self
    }

    /// The async-openai client for this config: key, base URL, TLS, timeouts and retry layer.
    pub(crate) fn client(&self) -> Result<Client<ClientConfig>> {
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls_config()?)
            .connect_timeout(self.connect_timeout)
            .read_timeout(self.read_timeout)
            .build()
            .map_err(|e| Error::Client { source: Box::new(e) })?;
        // async-openai's own retry layer: it reads `Retry-After`, and tells a 429 rate limit
        // (retried) from a 429 `insufficient_quota` (not retried).
        let service = OpenAIRetryLayer::new(self.max_retries).layer(ReqwestService::new(http.clone()));
        let config = ClientConfig::new()
            .with_api_base(self.base_url.trim_end_matches('/'))
            .with_api_key(self.api_key.clone().unwrap_or_default());
        // `build` with our client: `Client::with_config` would build a default reqwest client,
        // which has no crypto provider to use (reqwest's `rustls-no-provider`) and panics.
        Ok(Client::build(http, config).with_http_service(service))
    }
}

/// The rustls config of the HTTP client: the process-wide crypto provider when the application
/// installed one, else ring (never installed as the process default: that is the application's
/// choice to make), with the platform's certificate verifier, as reqwest's own `rustls` feature
/// would set it up, minus aws-lc-rs.
fn tls_config() -> Result<rustls::ClientConfig> {
    use rustls_platform_verifier::BuilderVerifierExt;

    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|builder| builder.with_platform_verifier())
        .map_err(|e| Error::Client { source: Box::new(e) })?
        .with_no_client_auth();
    // What reqwest offers when it builds the config itself without HTTP/2.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the key: configs end up in logs.
        f.debug_struct("OpenAiConfig")
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("max_retries", &self.max_retries)
            .finish_non_exhaustive()
    }
}
