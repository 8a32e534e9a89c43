//! How important an exchange is to remember, scored when `save_memory` writes it: the reranker
//! weighs importance, so a lasting fact outranks small talk of the same relevance.

use mnemograph_core::messages::Message;
use mnemograph_models::{ChatModel, ChatRequest, SharedChatModel};

use crate::error::{Error, Result};
use crate::question::{is_question, is_request};

/// The instructions the model scores an exchange with.
pub const IMPORTANCE_PROMPT: &str = "\
You rate how important one exchange between a user and an assistant is to remember about the \
user in future conversations. 1 means a lasting personal fact, preference, decision or plan \
(name, family, pets, health, home, work, goals); 0.5 means useful context; 0 means small talk \
or a question that reveals nothing about the user. Reply with one number between 0 and 1 and \
nothing else.";

/// The offline rule's score of a statement: something the user told about themselves.
pub const STATEMENT_IMPORTANCE: f32 = 0.7;
/// The offline rule's score of a question or request: its exchange repeats what memory already holds (the
/// answer came from it) or holds nothing, so it stays below [`MIN_RECALL_IMPORTANCE`].
pub const QUESTION_IMPORTANCE: f32 = 0.2;
/// The least importance a memory needs to be recalled (importance as a filter, not only a
/// weight). Without it a new question matches an old question better than the fact that answers
/// both, and the old exchange takes the fact's place in the top 3.
pub const MIN_RECALL_IMPORTANCE: f32 = 0.3;

/// The offline rule: the user telling something is worth recalling, the user asking something
/// (a question, or a request to the assistant) is not.
///
/// ```
/// assert_eq!(memory_agent::importance("My dog is called Biscuit."), 0.7);
/// assert_eq!(memory_agent::importance("What is my dog called?"), 0.2);
/// assert_eq!(memory_agent::importance("Recommend a good novel."), 0.2);
/// ```
pub fn importance(question: &str) -> f32 {
    if is_question(question) || is_request(question) {
        QUESTION_IMPORTANCE
    } else {
        STATEMENT_IMPORTANCE
    }
}

/// Who scores an exchange's importance in `save_memory`.
#[derive(Debug, Clone)]
pub enum ImportanceScorer {
    /// The offline [`importance`] rule: free and deterministic.
    Rule,
    /// Asks the chat model (temperature 0) with [`IMPORTANCE_PROMPT`]; when the call fails or
    /// the reply holds no number, the rule scores instead and a warning is logged.
    Llm(SharedChatModel),
}

impl ImportanceScorer {
    /// The importance of the exchange, in `[0, 1]`. Never fails: a failed model call or an
    /// unreadable reply falls back to the rule, so scoring cannot cost the user a turn.
    pub async fn score(&self, question: &str, answer: &str) -> f32 {
        let Self::Llm(model) = self else { return importance(question) };
        match score_with(model, question, answer).await {
            Ok(score) => score,
            Err(e) => {
                let fallback = importance(question);
                tracing::warn!(error = %e, fallback, "importance scoring failed; the offline rule scores");
                fallback
            }
        }
    }

    /// A short description for the start-up banner.
    pub fn describe(&self) -> &'static str {
        match self {
            Self::Rule => "offline rule (statement 0.7, question 0.2)",
            Self::Llm(_) => "the chat model scores 0-1 (offline rule if it fails)",
        }
    }
}

/// Asks `model` for the importance of one exchange.
///
/// # Errors
/// [`Error::Model`] when the call fails, [`Error::Importance`] when the reply holds no number.
pub async fn score_with(model: &SharedChatModel, question: &str, answer: &str) -> Result<f32> {
    let request = ChatRequest::new(vec![
        Message::system(IMPORTANCE_PROMPT),
        Message::human(format!("User: {question}\nAssistant: {answer}")),
    ])
    .with_temperature(0.0);
    let reply = model.invoke(request).await?.text();
    parse_importance(&reply).ok_or(Error::Importance { reply })
}

/// The score in a model's reply, clamped to `[0, 1]`: the first number, read as a fraction
/// when written `7/10` or `70%`. `None` when there is no number (or it divides by zero).
///
/// ```
/// use memory_agent::parse_importance;
/// assert_eq!(parse_importance("0.8"), Some(0.8));
/// assert_eq!(parse_importance("Importance: 7/10."), Some(0.7));
/// assert_eq!(parse_importance("85%"), Some(0.85));
/// assert_eq!(parse_importance("1.5"), Some(1.0));
/// assert_eq!(parse_importance("very important"), None);
/// ```
pub fn parse_importance(reply: &str) -> Option<f32> {
    let digit = reply.find(|c: char| c.is_ascii_digit())?;
    // `.5` starts at its point; a sentence's full stop before a number does not.
    let start = if reply[..digit].ends_with('.') { digit - 1 } else { digit };
    let (mut value, rest) = number(&reply[start..])?;
    if reply[..start].ends_with('-') {
        value = -value;
    }
    let rest = rest.trim_start();
    let score = if let Some(denominator) = rest.strip_prefix('/').and_then(|r| number(r.trim_start())) {
        value / denominator.0
    } else if rest.starts_with('%') {
        value / 100.0
    } else {
        value
    };
    score.is_finite().then(|| score.clamp(0.0, 1.0) as f32)
}

/// The decimal number `text` starts with, and what follows it.
fn number(text: &str) -> Option<(f64, &str)> {
    let end = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let value = text[..end].trim_end_matches('.').parse().ok()?;
    Some((value, &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_robustly() {
        for (reply, want) in [
            ("0.9", Some(0.9)),
            (" 0.25\n", Some(0.25)),
            ("Score: .5", Some(0.5)),
            ("1", Some(1.0)),
            ("I'd say 0.6.", Some(0.6)),
            ("8 / 10", Some(0.8)),
            ("-0.3", Some(0.0)),
            ("Sure. 0.8", Some(0.8)),
            ("3", Some(1.0)),
            ("0/0", None),
            ("", None),
            ("...", None),
            ("high", None),
        ] {
            assert_eq!(parse_importance(reply), want, "{reply:?}");
        }
    }
}
