//! An OpenAI-compatible endpoint as the environment names it. It is plain data, so settings are
//! read and checked the same way in every build; the client is made from it only where the
//! `openai` feature compiles one in.

use std::fmt;

/// Model, key and base URL of an OpenAI-compatible endpoint.
#[derive(Clone, PartialEq, Eq)]
pub struct OpenAiEndpoint {
    /// The model, e.g. `gpt-4o-mini` or `bge-m3`.
    pub model: String,
    /// The base URL (`OPENAI_BASE_URL`), or `None` for OpenAI's own.
    pub base_url: Option<String>,
    api_key: String,
}

impl OpenAiEndpoint {
    /// `model` at OpenAI's own API, authenticated with `api_key`.
    pub fn new(model: impl Into<String>, api_key: impl Into<String>) -> Self {
        Self { model: model.into(), base_url: None, api_key: api_key.into() }
    }

    /// The same model and key at another base URL (vLLM, Ollama, DeepSeek, ...).
    #[must_use]
    pub fn with_base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// `model at base URL`, for the start-up banner; never the key.
    pub fn describe(&self) -> String {
        format!("{} at {}", self.model, self.base_url.as_deref().unwrap_or("the OpenAI API"))
    }

    /// The client's configuration.
    #[cfg(feature = "openai")]
    pub(crate) fn client_config(&self) -> mnemograph_models::OpenAiConfig {
        let config =
            mnemograph_models::OpenAiConfig::new(self.model.clone()).with_api_key(self.api_key.clone());
        match &self.base_url {
            Some(url) => config.with_base_url(url.clone()),
            None => config,
        }
    }
}

impl fmt::Debug for OpenAiEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The key is a secret: Debug output reaches logs and test failures.
        f.debug_struct("OpenAiEndpoint")
            .field("model", &self.model)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_never_printed() {
        let e = OpenAiEndpoint::new("m", "sk-secret").with_base_url("http://h/v1");
        assert!(!format!("{e:?}").contains("sk-secret"));
        assert_eq!(e.describe(), "m at http://h/v1");
        assert_eq!(OpenAiEndpoint::new("m", "k").describe(), "m at the OpenAI API");
    }
}
