//! Fusion and reranking math: reciprocal rank fusion, time decay and importance weighting.
//!
//! Kept free of IO so the formulas are unit-tested exactly; both memories use them.

use std::time::Duration;

/// How retrieved memories are reordered after fusion.
///
/// `final = relevance × (1 − decay_weight + decay_weight × 0.5^(age / half_life))
///                     × (1 − importance_weight + importance_weight × importance)`
///
/// The weights blend each factor with 1, so at weight 0 a factor is off and at weight 1 it is a
/// plain multiplication. They default to partial weights: a full decay would let any recent
/// memory outrank a clearly better old one.
///
/// Hybrid fusion is weighted RRF with a small `k` and the keyword list at 0.3 of the dense one, not
/// the RRF paper's `k = 60` with equal weights. At `k = 60` ranks are so flat that any keyword hit
/// outweighs the dense order, so same-user distractors that repeat the question's words win, and
/// decay then dominates the flat relevance. A steep `k` with a light keyword list lets the dense
/// order decide while keeping keyword search's edge on exact identifiers;
/// docs/benchmarks/memory-quality.md measures both fusions on the hard planted-fact set
/// (`tests/support/hard_dataset.rs`).
///
/// ```
/// use mnemograph_memory::RerankConfig;
/// use std::time::Duration;
///
/// let r = RerankConfig::default().half_life(Duration::from_secs(86_400));
/// // One half-life old, neutral importance: decay factor 0.5 at weight 0.3 → 0.85.
/// let s = r.score(1.0, 86_400, 1.0);
/// assert!((s - 0.85).abs() < 1e-9);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RerankConfig {
    /// Age at which the decay factor is one half (default 30 days: memories fade over weeks,
    /// not hours).
    pub half_life: Duration,
    /// Weight of time decay in `[0, 1]` (default 0.3).
    pub decay_weight: f64,
    /// Weight of importance in `[0, 1]` (default 0.2).
    pub importance_weight: f64,
    /// RRF's `k` (default [`RRF_K`]; 60 is the RRF paper's and Milvus's value).
    pub rrf_k: u32,
    /// Weight of the keyword (BM25) list in hybrid fusion, against 1 for the dense list
    /// (see [`KEYWORD_WEIGHT`]).
    pub keyword_weight: f64,
    /// Weight of the dense list of the enriched query (recent messages and the question), against
    /// 1 for the dense list of the question alone (see [`CONTEXT_WEIGHT`]).
    pub context_weight: f64,
    /// Centred similarity from which a newer candidate counts as a restatement of an older one
    /// and ranks directly above it (see [`crate::newer_first`]); `None`, the default, keeps the
    /// score order. Applied by [`NewerFirst`](crate::NewerFirst) when the query reranks.
    ///
    /// Off by default because the threshold belongs to the embedding model, as a similarity
    /// rule's does: how far apart two restatements stay once centred differs from model to model
    /// (docs/benchmarks/memory-quality.md measures it per model, on two sets).
    pub newer_first: Option<f64>,
}

/// The default [`RerankConfig::context_weight`]: the enriched query's hits count half of the
/// question's own.
///
/// The recent messages resolve a follow-up ("and her birthday?"), but embedded together with the
/// question they also pull towards whatever they talk about: a greeting before a question drags the
/// vector towards small talk. Searching both and fusing keeps the follow-up's context while the
/// question's own words decide (docs/benchmarks/memory-quality.md measures both alone and fused).
pub const CONTEXT_WEIGHT: f64 = 0.5;

/// The default [`RerankConfig::keyword_weight`]: keyword hits count 0.3 of dense ones.
pub const KEYWORD_WEIGHT: f64 = 0.3;

/// The default [`RerankConfig::rrf_k`]: steep, so the dense order decides unless keywords agree.
pub const RRF_K: u32 = 2;

impl Default for RerankConfig {
    fn default() -> Self {
        Self {
            half_life: Duration::from_secs(30 * 86_400),
            decay_weight: 0.3,
            importance_weight: 0.2,
            rrf_k: RRF_K,
            keyword_weight: KEYWORD_WEIGHT,
            context_weight: CONTEXT_WEIGHT,
            newer_first: None,
        }
    }
}

impl RerankConfig {
    /// Sets the half-life of time decay.
    #[must_use]
    pub fn half_life(mut self, half_life: Duration) -> Self {
        self.half_life = half_life;
        self
    }
    /// Sets the weight of time decay (clamped to `[0, 1]`).
    #[must_use]
    pub fn decay_weight(mut self, weight: f64) -> Self {
        self.decay_weight = weight.clamp(0.0, 1.0);
        self
    }
    /// Sets the weight of importance (clamped to `[0, 1]`).
    #[must_use]
    pub fn importance_weight(mut self, weight: f64) -> Self {
        self.importance_weight = weight.clamp(0.0, 1.0);
        self
    }
    /// Sets RRF's `k`.
    #[must_use]
    pub fn rrf_k(mut self, k: u32) -> Self {
        self.rrf_k = k;
        self
    }
    /// Sets the weight of the keyword list in hybrid fusion (clamped to `[0, 1]`; 0 ranks by the
    /// dense list alone, 1 is plain RRF).
    #[must_use]
    pub fn keyword_weight(mut self, weight: f64) -> Self {
        self.keyword_weight = weight.clamp(0.0, 1.0);
        self
    }
    /// Sets the weight of the enriched query's dense list (clamped to `[0, 1]`; 0 searches with
    /// the question alone, 1 counts the enriched query as much as the question).
    #[must_use]
    pub fn context_weight(mut self, weight: f64) -> Self {
        self.context_weight = weight.clamp(0.0, 1.0);
        self
    }

    /// Sets the centred similarity from which a newer candidate ranks above an older one it
    /// restates (`None` turns the step off; see [`crate::newer_first`]).
    #[must_use]
    pub fn newer_first(mut self, threshold: Option<f64>) -> Self {
        self.newer_first = threshold;
        self
    }

    /// Fuses a dense and a keyword result list (`(id, score)`, best first) by weighted RRF: the
    /// dense list with weight 1, the keyword list with [`keyword_weight`](Self::keyword_weight).
    /// Items with equal scores share a rank (1, 1, 3, ...), so that identical memories are not
    /// told apart by the order a backend happened to return them in: decay and importance decide
    /// between them. Returns ids with their relevance in `[0, 1]` (the fused score over its
    /// maximum), best first.
    pub fn fuse(&self, dense: &[(i64, f64)], keywords: &[(i64, f64)]) -> Vec<(i64, f64)> {
        self.fuse_weighted(&[(dense, 1.0), (keywords, self.keyword_weight)])
    }

    /// Fuses the lists of one retrieval: the question's dense list (weight 1), the enriched
    /// query's dense list when the query has recent context
    /// ([`context_weight`](Self::context_weight)) and the keyword list when the search is hybrid
    /// ([`keyword_weight`](Self::keyword_weight)). Ranks and relevance as in [`fuse`](Self::fuse).
    pub fn fuse_query(
        &self,
        dense: &[(i64, f64)],
        context: Option<&[(i64, f64)]>,
        keywords: Option<&[(i64, f64)]>,
    ) -> Vec<(i64, f64)> {
        let mut lists = vec![(dense, 1.0)];
        lists.extend(context.map(|c| (c, self.context_weight)));
        lists.extend(keywords.map(|k| (k, self.keyword_weight)));
        self.fuse_weighted(&lists)
    }

    /// Weighted RRF over scored lists with competition ranks, normalised by the score of an item
    /// first in every list.
    fn fuse_weighted(&self, lists: &[(&[(i64, f64)], f64)]) -> Vec<(i64, f64)> {
        let ranked: Vec<(Vec<(i64, usize)>, f64)> =
            lists.iter().map(|&(list, w)| (competition_ranks(list), w)).collect();
        let total: f64 = lists.iter().map(|l| l.1).sum();
        let max = total / (f64::from(self.rrf_k) + 1.0);
        let fused = fuse_ranked(&ranked, self.rrf_k);
        fused
            .into_iter()
            .map(|(id, s)| (id, if max > 0.0 { (s / max).clamp(0.0, 1.0) } else { 0.0 }))
            .collect()
    }

    /// `0.5^(age / half_life)`; memories from the future (clock skew) count as new.
    pub fn decay(&self, age_secs: i64) -> f64 {
        let half = self.half_life.as_secs_f64();
        if half <= 0.0 {
            return 1.0;
        }
        0.5f64.powf(age_secs.max(0) as f64 / half)
    }

    /// The final score of a memory with `relevance` (in `[0, 1]`), `age_secs` and `importance`.
    pub fn score(&self, relevance: f64, age_secs: i64, importance: f64) -> f64 {
        let decay = 1.0 - self.decay_weight + self.decay_weight * self.decay(age_secs);
        let weight = 1.0 - self.importance_weight + self.importance_weight * importance.clamp(0.0, 1.0);
        relevance * decay * weight
    }
}

/// Reciprocal rank fusion of ranked id lists: `Σ 1/(k + rank)` with 1-based ranks, best first.
/// Ties keep the order in which ids first appear (list order, then rank).
///
/// ```
/// use mnemograph_memory::rrf;
/// let fused = rrf(&[vec![1, 2, 3], vec![3, 1]], 60);
/// assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 3, 2]);
/// ```
pub fn rrf(lists: &[Vec<i64>], k: u32) -> Vec<(i64, f64)> {
    let weighted: Vec<(&[i64], f64)> = lists.iter().map(|l| (l.as_slice(), 1.0)).collect();
    weighted_rrf(&weighted, k)
}

/// Weighted reciprocal rank fusion: `Σ w/(k + rank)` over `(list, w)` pairs, best first; ties
/// keep first-appearance order, as in [`rrf`].
///
/// ```
/// use mnemograph_memory::weighted_rrf;
/// let (first, second) = (&[1, 2, 3][..], &[3, 2][..]);
/// let order = |fused: Vec<(i64, f64)>| fused.iter().map(|f| f.0).collect::<Vec<_>>();
/// // At k = 60 ranks are so flat that even a 0.1-weight second list reorders the first.
/// assert_eq!(order(weighted_rrf(&[(first, 1.0), (second, 0.1)], 60)), [2, 3, 1]);
/// // At k = 2 the first list's order holds against it.
/// assert_eq!(order(weighted_rrf(&[(first, 1.0), (second, 0.1)], 2)), [1, 2, 3]);
/// ```
pub fn weighted_rrf(lists: &[(&[i64], f64)], k: u32) -> Vec<(i64, f64)> {
    let ranked: Vec<(Vec<(i64, usize)>, f64)> = lists
        .iter()
        .map(|&(list, w)| (list.iter().enumerate().map(|(r, &id)| (id, r)).collect(), w))
        .collect();
    fuse_ranked(&ranked, k)
}

/// `(id, 0-based rank)` of a scored list, best first, where a score equal to the previous one
/// keeps its rank (competition ranking: 0, 0, 2, ...).
fn competition_ranks(list: &[(i64, f64)]) -> Vec<(i64, usize)> {
    let mut rank = 0;
    let mut out = Vec::with_capacity(list.len());
    for (i, &(id, score)) in list.iter().enumerate() {
        if i == 0 || score != list[i - 1].1 {
            rank = i;
        }
        out.push((id, rank));
    }
    out
}

/// The fusion behind [`weighted_rrf`] and [`RerankConfig::fuse`]: `Σ w/(k + rank + 1)` over
/// `(ranked ids, w)` lists, best first; a stable sort keeps first-appearance order among equal
/// scores.
fn fuse_ranked(lists: &[(Vec<(i64, usize)>, f64)], k: u32) -> Vec<(i64, f64)> {
    let mut fused: Vec<(i64, f64)> = Vec::new();
    for (list, weight) in lists {
        for &(id, rank) in list {
            let add = weight / (f64::from(k) + rank as f64 + 1.0);
            match fused.iter_mut().find(|(i, _)| *i == id) {
                Some((_, s)) => *s += add,
                None => fused.push((id, add)),
            }
        }
    }
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400;

    #[test]
    fn decay_halves_every_half_life() {
        let r = RerankConfig::default().half_life(Duration::from_secs(10 * DAY as u64));
        assert_eq!(r.decay(0), 1.0);
        assert!((r.decay(10 * DAY) - 0.5).abs() < 1e-12);
        assert!((r.decay(20 * DAY) - 0.25).abs() < 1e-12);
        assert_eq!(r.decay(-DAY), 1.0, "future timestamps are not boosted");
        assert_eq!(RerankConfig::default().half_life(Duration::ZERO).decay(DAY), 1.0);
    }

    #[test]
    fn score_blends_factors_by_weight() {
        let full = RerankConfig::default().decay_weight(1.0).importance_weight(1.0);
        let r30 = full.half_life(Duration::from_secs(30 * DAY as u64));
        // Full weights give the plain product: relevance × decay × importance.
        assert!((r30.score(0.8, 30 * DAY, 0.5) - 0.8 * 0.5 * 0.5).abs() < 1e-12);
        let off = RerankConfig::default().decay_weight(0.0).importance_weight(0.0);
        assert_eq!(off.score(0.8, 365 * DAY, 0.0), 0.8);
        let d = RerankConfig::default();
        // Defaults: decay 0.3, importance 0.2, 30-day half-life.
        let expected = 0.6 * (0.7 + 0.3 * 0.25) * (0.8 + 0.2 * 0.9);
        assert!((d.score(0.6, 60 * DAY, 0.9) - expected).abs() < 1e-12);
        assert_eq!(RerankConfig::default().decay_weight(7.0).decay_weight, 1.0);
    }

    #[test]
    fn newer_and_more_important_win_at_equal_relevance() {
        let r = RerankConfig::default();
        assert!(r.score(0.5, DAY, 0.5) > r.score(0.5, 90 * DAY, 0.5));
        assert!(r.score(0.5, DAY, 0.9) > r.score(0.5, DAY, 0.1));
        // But a clearly more relevant old memory still beats a weak new one.
        assert!(r.score(0.9, 90 * DAY, 0.5) > r.score(0.5, 0, 0.5));
    }

    #[test]
    fn rrf_matches_the_formula() {
        let fused = rrf(&[vec![10, 20, 30], vec![30, 40]], 60);
        let get = |id| fused.iter().find(|f| f.0 == id).unwrap().1;
        assert!((get(10) - 1.0 / 61.0).abs() < 1e-15);
        assert!((get(30) - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-15);
        assert!((get(40) - 1.0 / 62.0).abs() < 1e-15);
        assert_eq!(fused[0].0, 30);
        assert_eq!(fused.len(), 4);
        assert!(rrf(&[], 60).is_empty());
    }

    #[test]
    fn the_question_outweighs_its_context_and_agreement_is_one() {
        let r = RerankConfig::default();
        let (question, context, keywords) = ([(1, 0.9), (2, 0.8)], [(2, 0.9), (1, 0.8)], [(1, 3.0)]);
        let fused = r.fuse_query(&question, Some(&context), None);
        assert_eq!(fused[0].0, 1, "the question's own first hit stays first: {fused:?}");
        let all = r.fuse_query(&question, Some(&question), Some(&keywords));
        assert!((all[0].1 - 1.0).abs() < 1e-12, "first everywhere is relevance 1: {all:?}");
        // Without context it is the hybrid fusion; at weight 0 the context changes nothing.
        assert_eq!(r.fuse_query(&question, None, Some(&keywords)), r.fuse(&question, &keywords));
        let blind = r.context_weight(0.0).fuse_query(&question, Some(&context), None);
        assert_eq!(blind.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 2]);
        // Equal weights: the context's order ties the question's; a stable sort keeps the latter.
        let tied = r.context_weight(1.0).fuse_query(&[(1, 0.9), (3, 0.5)], Some(&[(2, 0.9), (1, 0.5)]), None);
        assert_eq!(tied[0].0, 1, "in both lists: {tied:?}");
    }

    #[test]
    fn fuse_weighs_keywords_less_and_normalizes_to_one() {
        let r = RerankConfig::default();
        // Agreement at rank 1 is the maximum.
        let scored = |ids: &[i64]| {
            ids.iter().enumerate().map(|(i, &id)| (id, 1.0 - i as f64 / 10.0)).collect::<Vec<_>>()
        };
        let top = r.fuse(&scored(&[7, 8]), &scored(&[7, 9]))[0];
        assert!(top.0 == 7 && (top.1 - 1.0).abs() < 1e-12, "{top:?}");
        // A keyword hit lifts a lower dense rank only so far: dense rank 1 keeps the top against
        // dense rank 3 + keyword rank 1 at the default weight.
        let fused = r.fuse(&scored(&[1, 2, 3]), &scored(&[3]));
        assert_eq!(fused.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 3, 2]);
        // Plain RRF (k = 60, equal weights) lets the keyword hit win.
        let plain = RerankConfig::default().rrf_k(60).keyword_weight(1.0);
        assert_eq!(plain.fuse(&scored(&[1, 2, 3]), &scored(&[3]))[0].0, 3);
        // Weight 0: the dense order, keyword-only ids after it with relevance 0.
        let dense_only = RerankConfig::default().keyword_weight(0.0).fuse(&scored(&[5, 6]), &scored(&[9, 6]));
        assert_eq!(dense_only.iter().map(|f| f.0).collect::<Vec<_>>(), [5, 6, 9]);
        assert_eq!(dense_only[2].1, 0.0);
        assert!(fused.iter().all(|(_, s)| (0.0..=1.0).contains(s)));
        // Equal scores share a rank, so equal memories get equal relevance.
        let tied = r.fuse(&[(1, 0.9), (2, 0.9), (3, 0.5)], &[(2, 4.0), (1, 4.0)]);
        assert_eq!(tied[0].1, tied[1].1);
        assert!(tied[2].1 < tied[1].1);
    }
}
