//! Deciding which older memories a new one supersedes: the [`SupersedeDecider`] trait and its
//! offline, deterministic implementation [`RuleDecider`]. The LLM-backed one is
//! [`LlmDecider`](crate::LlmDecider).

use std::future::Future;

use crate::error::Result;
use crate::record::MemoryRecord;

/// An older memory of the same user that might be superseded, with its dense similarity to the
/// new one.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Candidate {
    /// The older memory.
    pub record: MemoryRecord,
    /// Cosine similarity to the new memory, in `[0, 1]`.
    pub similarity: f64,
}

impl Candidate {
    /// A candidate with its similarity.
    pub fn new(record: MemoryRecord, similarity: f64) -> Self {
        Self { record, similarity }
    }
}

/// A decision: the candidate `id` is superseded, for `reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Supersession {
    /// Id of the superseded candidate.
    pub id: i64,
    /// Why, kept in the retired memory's metadata for audits.
    pub reason: String,
}

impl Supersession {
    /// Candidate `id` is superseded, for `reason`.
    pub fn new(id: i64, reason: impl Into<String>) -> Self {
        Self { id, reason: reason.into() }
    }
}

/// Decides which of a new memory's candidates it supersedes (LangMem's "update or delete"
/// judgement, as one call per new memory).
///
/// The [`Consolidator`](crate::Consolidator) finds the candidates (the same user's most similar
/// older memories) and retires what the decider names. It rejects the whole decision, retiring
/// nothing, when a name is not one of the candidates, so a decider can never reach a memory it was
/// not shown (another user's, or a newer one).
pub trait SupersedeDecider: Send + Sync {
    /// The candidates `new` supersedes; an empty vector keeps them all.
    ///
    /// # Errors
    /// [`Error::Decider`](crate::Error::Decider) when deciding failed,
    /// [`Error::MalformedDecision`](crate::Error::MalformedDecision) for an unreadable answer.
    fn decide(
        &self,
        new: &MemoryRecord,
        candidates: &[Candidate],
    ) -> impl Future<Output = Result<Vec<Supersession>>> + Send;
}

/// The offline decider: a candidate is superseded when it is at least `min_similarity` similar to
/// the new memory, strictly older, and (by default) of the same role.
///
/// Deterministic and free, but similarity cannot tell "the same fact, changed" from "a
/// near-identical fact about something else" (two tickets, two error codes): set the threshold
/// high (near-duplicates, the default 0.9) and use the [`LlmDecider`](crate::LlmDecider) when
/// facts change in other words. docs/benchmarks/memory-quality.md measures both on the
/// hard set.
///
/// ```
/// use mnemograph_memory::RuleDecider;
/// let d = RuleDecider::default().min_similarity(0.95);
/// assert_eq!(d.min_similarity, 0.95);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RuleDecider {
    /// Similarity from which an older memory counts as restated (default 0.9).
    pub min_similarity: f64,
    /// Only supersede memories of the new one's role (default true): a summary and an exchange
    /// say different kinds of things even when they are similar.
    pub same_role: bool,
}

impl Default for RuleDecider {
    fn default() -> Self {
        Self { min_similarity: 0.9, same_role: true }
    }
}

impl RuleDecider {
    /// Sets the similarity threshold (clamped to `[0, 1]`).
    #[must_use]
    pub fn min_similarity(mut self, threshold: f64) -> Self {
        self.min_similarity = threshold.clamp(0.0, 1.0);
        self
    }
    /// Allows superseding memories of other roles when `false`.
    #[must_use]
    pub fn same_role(mut self, on: bool) -> Self {
        self.same_role = on;
        self
    }

    /// The decision, synchronously.
    pub fn decide_now(&self, new: &MemoryRecord, candidates: &[Candidate]) -> Vec<Supersession> {
        candidates
            .iter()
            .filter(|c| c.similarity >= self.min_similarity)
            .filter(|c| c.record.created_at < new.created_at)
            .filter(|c| !self.same_role || c.record.role == new.role)
            .map(|c| {
                let days = (new.created_at - c.record.created_at) as f64 / 86_400.0;
                let reason = format!(
                    "rule: similarity {:.3} >= {:.3}, {days:.1} days older",
                    c.similarity, self.min_similarity
                );
                Supersession::new(c.record.id, reason)
            })
            .collect()
    }
}

impl SupersedeDecider for RuleDecider {
    fn decide(
        &self,
        new: &MemoryRecord,
        candidates: &[Candidate],
    ) -> impl Future<Output = Result<Vec<Supersession>>> + Send {
        std::future::ready(Ok(self.decide_now(new, candidates)))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::Map;

    use super::*;

    /// A record for tests.
    pub(crate) fn rec(id: i64, role: &str, content: &str, created_at: i64) -> MemoryRecord {
        MemoryRecord {
            id,
            user_id: "u".into(),
            session_id: "s".into(),
            role: role.into(),
            content: content.into(),
            created_at,
            importance: 0.5,
            metadata: Map::new(),
        }
    }

    #[test]
    fn rule_supersedes_similar_older_memories_of_the_same_role_only() {
        let new = rec(10, "exchange", "new", 1_000);
        let candidates = [
            Candidate::new(rec(1, "exchange", "similar, older", 100), 0.95),
            Candidate::new(rec(2, "exchange", "dissimilar", 100), 0.5),
            Candidate::new(rec(3, "exchange", "similar, same second", 1_000), 0.99),
            Candidate::new(rec(4, "summary", "similar summary", 100), 0.97),
        ];
        let d = RuleDecider::default();
        let ids: Vec<i64> = d.decide_now(&new, &candidates).iter().map(|s| s.id).collect();
        assert_eq!(ids, [1]);
        let any_role = d.same_role(false).min_similarity(0.4);
        let ids: Vec<i64> = any_role.decide_now(&new, &candidates).iter().map(|s| s.id).collect();
        assert_eq!(ids, [1, 2, 4], "never a memory as new as the new one");
        assert!(d.decide_now(&new, &candidates)[0].reason.starts_with("rule: similarity 0.950"));
    }
}
