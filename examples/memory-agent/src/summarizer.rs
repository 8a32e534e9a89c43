//! [`AgentSummarizer`]: what writes the summary that replaces a compacted session's exchanges,
//! the chat model or, offline, an extractive rule.

use mnemograph_core::BoxError;
use mnemograph_memory::{LlmSummarizer, MemoryRecord, Summarizer};
use mnemograph_models::{ModelCall, SharedChatModel};

use crate::question::is_question;

/// Writes compaction summaries for mnemograph-memory's
/// [`compact_and_retire`](mnemograph_memory::compact_and_retire).
#[derive(Debug, Clone)]
pub enum AgentSummarizer {
    /// Offline and deterministic: keeps the user's statements of the exchanges, one
    /// `User: …` line each (the form [`OfflineModel`](crate::OfflineModel) reads facts from),
    /// and names the questions asked on one line. Nothing is paraphrased, so nothing is made up.
    Extractive,
    /// Asks the chat model with mnemograph-memory's [`SUMMARY_PROMPT`](mnemograph_memory::SUMMARY_PROMPT)
    /// (temperature 0).
    Llm(SharedChatModel),
}

impl AgentSummarizer {
    /// A short description for the start-up banner.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::Extractive => "extractive (keeps the user's statements)",
            Self::Llm(_) => "the chat model summarizes",
        }
    }
}

/// The user's line of a stored exchange (`User: …\nAssistant: …`), or the whole text of another
/// memory.
pub(crate) fn user_line(content: &str) -> &str {
    let first = content.lines().next().unwrap_or_default();
    first.strip_prefix("User: ").unwrap_or(first)
}

/// The extractive summary of `records`; `None` when they hold no text at all.
pub fn extractive_summary(records: &[MemoryRecord]) -> Option<String> {
    let said: Vec<&str> =
        records.iter().map(|r| user_line(&r.content)).filter(|l| !l.trim().is_empty()).collect();
    if said.is_empty() {
        return None;
    }
    let (questions, statements): (Vec<&str>, Vec<&str>) = said.into_iter().partition(|l| is_question(l));
    let mut summary = format!("Summary of {} exchanges:", records.len());
    for statement in statements {
        summary.push_str("\nUser: ");
        summary.push_str(statement);
    }
    if !questions.is_empty() {
        summary.push_str("\nQuestions asked: ");
        summary.push_str(&questions.join(" | "));
    }
    Some(summary)
}

impl Summarizer for AgentSummarizer {
    async fn summarize(&self, records: &[MemoryRecord]) -> Result<Vec<String>, BoxError> {
        match self {
            Self::Extractive => Ok(extractive_summary(records).into_iter().collect()),
            Self::Llm(model) => {
                let call = ModelCall::new(model.clone()).temperature(0.0);
                LlmSummarizer::new(call).summarize(records).await
            }
        }
    }
}
