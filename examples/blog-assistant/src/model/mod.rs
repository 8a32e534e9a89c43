//! The chat model: an OpenAI-compatible endpoint when configured, else the offline model.

pub mod offline;

use mnemograph_models::{ChatModelExt, OpenAiChatModel, SharedChatModel};

pub use offline::{is_history_question, OfflineModel};

use crate::config::ModelChoice;
use crate::error::Result;

/// Builds the configured model, logging which one answers.
///
/// # Errors
/// [`Error::Model`](crate::Error::Model) when the OpenAI client cannot be built.
pub fn build(choice: &ModelChoice) -> Result<SharedChatModel> {
    Ok(match choice {
        ModelChoice::OpenAi(config) => {
            tracing::info!(model = %config.model, base_url = %config.base_url, "answering with an OpenAI-compatible model");
            OpenAiChatModel::new(config.clone())?.shared()
        }
        ModelChoice::Offline { token_delay } => {
            tracing::warn!(
                "OPENAI_API_KEY is not set: answering OFFLINE with the example's deterministic model \
                 (it searches the blog, reads the best article and cites it)"
            );
            OfflineModel::new(*token_delay).shared()
        }
    })
}
