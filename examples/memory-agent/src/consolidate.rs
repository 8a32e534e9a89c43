//! The update path: when the user states a fact that changes an older one ("I moved to
//! Shanghai"), `save_memory` retires the older memory so later sessions no longer recall it.
//! [`AgentConsolidator`] picks mnemograph-memory's decider to match the model, and [`Clock`] gives
//! the agent its time.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use mnemograph_memory::{
    now_secs, Candidate, ConsolidateReport, Consolidator, LlmDecider, Memory, MemoryRecord, NewMemory,
    Result, RuleDecider, SupersedeDecider, Supersession,
};
use mnemograph_models::{ModelCall, SharedChatModel};

use crate::memory::AgentMemory;
use crate::passages::Passages;
use crate::same_subject::SameSubject;
use crate::subjects::Subjects;

/// Similarity from which the offline rule retires an older statement, with word hashing. The
/// memories are whole exchanges, and the offline model acknowledges every statement with the same
/// words, so two statements share their whole answer line: only a near-restatement ("I live in
/// Beijing" → "I live in Shanghai now") reaches this, two different facts do not. Other embedding
/// models spread scores differently and use their own threshold
/// ([`EmbedderChoice::rule_similarity`](crate::EmbedderChoice::rule_similarity)).
pub const RULE_SIMILARITY: f64 = 0.8;

/// Which mnemograph-memory decider judges what a new statement supersedes.
#[derive(Debug, Clone)]
pub enum AgentConsolidator {
    /// Offline: [`RuleDecider`] at a similarity threshold, deterministic and free, retiring only
    /// statements on the new one's subject when the embedding model places subjects
    /// ([`SameSubject`]).
    Rule(Consolidator<SameSubject<RuleDecider>>),
    /// With an OpenAI-compatible model: [`LlmDecider`] over that model, which also catches facts
    /// changed in other words, with the offline rule behind it ([`FallbackDecider`]).
    Llm(Consolidator<FallbackDecider>),
}

/// The chat model's decision, or the offline rule's when the model fails.
///
/// The model is asked at temperature 0 (the decision should not vary between runs). When the
/// call fails or the reply is out of format, [`RuleDecider`] decides instead, a warning is
/// logged, and each retirement's reason says that the rule made it: the user's turn is already
/// answered and saved, and a failed judgement must not cost it.
#[derive(Debug, Clone)]
pub struct FallbackDecider {
    /// The chat model's decider.
    llm: LlmDecider<ModelCall<SharedChatModel>>,
    /// Decides when the model cannot.
    rule: SameSubject<RuleDecider>,
}

impl FallbackDecider {
    /// The decider of `model`, falling back to the rule at `min_similarity`.
    pub fn new(model: SharedChatModel, min_similarity: f64) -> Self {
        Self {
            llm: LlmDecider::new(ModelCall::new(model).temperature(0.0)),
            rule: SameSubject::new(RuleDecider::default().min_similarity(min_similarity), None),
        }
    }

    /// Lets the rule retire only statements on the new one's subject (see [`SameSubject`]).
    #[must_use]
    pub fn with_subjects(mut self, subjects: Option<(Passages, Subjects)>) -> Self {
        self.rule = SameSubject::new(*self.rule.inner(), subjects);
        self
    }

    /// The rule it falls back to.
    pub fn rule(&self) -> &RuleDecider {
        self.rule.inner()
    }
}

/// Opens the reason of a retirement the rule made because the model's decision failed.
pub const FALLBACK_REASON: &str = "the chat model's decision failed, so the offline rule decided";

impl SupersedeDecider for FallbackDecider {
    async fn decide(&self, new: &MemoryRecord, candidates: &[Candidate]) -> Result<Vec<Supersession>> {
        match self.llm.decide(new, candidates).await {
            Ok(decisions) => Ok(decisions),
            Err(e) => {
                let decisions = self.rule.decide(new, candidates).await?;
                tracing::warn!(
                    error = %e,
                    retired = decisions.len(),
                    "the supersession decision failed; the offline rule decides"
                );
                Ok(decisions
                    .into_iter()
                    .map(|d| Supersession::new(d.id, format!("{FALLBACK_REASON}: {}", d.reason)))
                    .collect())
            }
        }
    }
}

impl AgentConsolidator {
    /// The offline rule at [`RULE_SIMILARITY`] (word hashing's threshold).
    pub fn rule() -> Self {
        Self::rule_at(RULE_SIMILARITY)
    }

    /// The offline rule, retiring older statements at least `min_similarity` similar.
    pub fn rule_at(min_similarity: f64) -> Self {
        Self::rule_on(min_similarity, None)
    }

    /// The offline rule, retiring older statements at least `min_similarity` similar and, with
    /// `subjects`, on a subject of the new one (see [`SameSubject`]).
    pub fn rule_on(min_similarity: f64, subjects: Option<(Passages, Subjects)>) -> Self {
        let rule = RuleDecider::default().min_similarity(min_similarity);
        Self::Rule(Consolidator::new(SameSubject::new(rule, subjects)))
    }

    /// The LLM decider over `model`, falling back to the offline rule at `min_similarity` when
    /// the model fails (see [`FallbackDecider`]).
    pub fn llm(model: SharedChatModel, min_similarity: f64) -> Self {
        Self::llm_on(model, min_similarity, None)
    }

    /// The LLM decider over `model`, falling back to the offline rule at `min_similarity`, on a
    /// subject of the new statement with `subjects`, when the model fails.
    pub fn llm_on(
        model: SharedChatModel,
        min_similarity: f64,
        subjects: Option<(Passages, Subjects)>,
    ) -> Self {
        Self::Llm(Consolidator::new(FallbackDecider::new(model, min_similarity).with_subjects(subjects)))
    }

    /// A short description for the start-up banner.
    pub fn describe(&self) -> String {
        let on = |rule: &SameSubject<RuleDecider>| if rule.by_subject() { ", same subject" } else { "" };
        match self {
            Self::Rule(c) => {
                format!(
                    "offline rule (similarity >= {}{})",
                    c.decider().inner().min_similarity,
                    on(c.decider())
                )
            }
            Self::Llm(c) => format!(
                "the chat model judges (LlmDecider; offline rule, similarity >= {}{}, if it fails)",
                c.decider().rule().min_similarity,
                on(&c.decider().rule)
            ),
        }
    }

    /// Saves `turn`; when `statement` is true, also retires the older memories it supersedes.
    ///
    /// Questions are saved only: they ask rather than state, and the exchange of a question
    /// quotes the very fact it asked about, which a similarity rule would take for a restatement.
    ///
    /// # Errors
    /// Memory errors. A failed model decision is not one: the rule decides instead.
    pub async fn save_turn(
        &self,
        memory: &AgentMemory,
        turn: NewMemory,
        statement: bool,
    ) -> Result<(i64, ConsolidateReport)> {
        if !statement {
            return Ok((memory.save_turn(turn).await?, ConsolidateReport::default()));
        }
        match self {
            Self::Rule(c) => c.save_turn(memory, turn).await,
            Self::Llm(c) => c.save_turn(memory, turn).await,
        }
    }
}

/// The agent's clock: the system time plus an offset.
///
/// The offset is zero except in the scripted demo, which plays a week in a second: it moves the
/// clock to each session's day, so memories get their day's timestamp, decay ages them, and a
/// Friday statement is strictly newer than Monday's (the consolidator never lets a memory retire
/// one saved in the same second). Clones share the offset.
#[derive(Debug, Clone, Default)]
pub struct Clock {
    /// Seconds added to the system time.
    offset: Arc<AtomicI64>,
}

impl Clock {
    /// Seconds since the epoch, offset.
    pub fn now(&self) -> i64 {
        now_secs() + self.offset.load(Ordering::Relaxed)
    }

    /// Sets the offset, in seconds.
    pub fn set_offset(&self, seconds: i64) {
        self.offset.store(seconds, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_offset() {
        let clock = Clock::default();
        let copy = clock.clone();
        let before = copy.now();
        clock.set_offset(4 * 86_400);
        let after = copy.now();
        assert!((4 * 86_400..4 * 86_400 + 5).contains(&(after - before)), "{before} {after}");
    }
}
