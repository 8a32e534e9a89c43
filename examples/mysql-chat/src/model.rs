//! Choosing the chat model: the OpenAI-compatible client when a key is configured, otherwise the
//! offline model.

use mnemograph_models::{ChatModelExt, OpenAiChatModel, OpenAiConfig, SharedChatModel};

use crate::error::Result;
use crate::offline::OfflineModel;

/// The model used when `OPENAI_MODEL` is not set.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";

/// Which model [`model_from_env`] chose.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelChoice {
    /// The OpenAI-compatible client.
    OpenAi {
        /// The model name sent with each request.
        model: String,
        /// The endpoint.
        base_url: String,
    },
    /// [`OfflineModel`]: no key was configured.
    Offline,
}

/// The model for the service: [`OpenAiChatModel`] when `OPENAI_API_KEY` is set (with
/// `OPENAI_BASE_URL` and `OPENAI_MODEL`, default [`DEFAULT_OPENAI_MODEL`]), otherwise
/// [`OfflineModel`], which needs no network and says so in the log.
///
/// # Errors
/// [`Error::Model`](crate::Error::Model) when the client cannot be built from the variables.
pub fn model_from_env() -> Result<(SharedChatModel, ModelChoice)> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let Some(key) = var("OPENAI_API_KEY") else {
        tracing::warn!("OPENAI_API_KEY is not set: answering with the offline deterministic model");
        return Ok((OfflineModel.shared(), ModelChoice::Offline));
    };
    let mut config =
        OpenAiConfig::new(var("OPENAI_MODEL").unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_owned()))
            .with_api_key(key);
    if let Some(url) = var("OPENAI_BASE_URL") {
        config = config.with_base_url(url);
    }
    let choice = ModelChoice::OpenAi { model: config.model.clone(), base_url: config.base_url.clone() };
    tracing::info!(model = %config.model, base_url = %config.base_url, "using the OpenAI-compatible model");
    Ok((OpenAiChatModel::new(config)?.shared(), choice))
}
