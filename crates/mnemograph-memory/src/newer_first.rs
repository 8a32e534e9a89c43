//! Newer versions first: when two memories a retrieval found say the same thing in other words,
//! the newer one ranks above the older one.
//!
//! Facts change ("I live in Beijing", later "we just moved to Shanghai"), and a write-time
//! decider cannot always tell a change from a neighbouring fact: the pair may be no more similar
//! than two unrelated statements of the same user. A retrieval knows more: both memories answer
//! the same question. Among the candidates of one retrieval, the similarity of two memories is
//! measured after removing what every candidate shares (their mean vector: a fixed assistant
//! reply, the user's style, the topic of the question itself), so that what remains is what each
//! memory says. A newer memory still similar to an older one after that is taken to restate it,
//! and moves directly above it. The older memory stays in the list, one place lower.
//!
//! The step is off unless [`RerankConfig::newer_first`] sets a threshold: the threshold belongs to
//! the embedding model. It costs what a similarity judgement costs: a newer memory close to an
//! older one in what it says, without restating it, passes it too
//! (docs/benchmarks/memory-quality.md measures both effects).
//!
//! ```
//! use mnemograph_memory::newer_first::reorder;
//!
//! // Two versions of a fact (1 older, 2 newer) and three unrelated memories.
//! let created = [10, 20, 15, 16, 5];
//! let vectors = vec![
//!     vec![1.0, 0.9, 0.0, 0.0],
//!     vec![1.0, 1.0, 0.0, 0.0],
//!     vec![0.0, 0.0, 1.0, 0.0],
//!     vec![0.0, 0.0, 0.0, 1.0],
//!     vec![0.0, 0.1, 0.5, 0.5],
//! ];
//! // Ranked by score: the old version first, the new one last.
//! let order = reorder(&[0, 2, 3, 4, 1], &created, &vectors, &[], 0.2);
//! assert_eq!(order, [1, 0, 2, 3, 4]);
//! ```

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mnemograph_checkpoint::store::{cosine_similarity, DynEmbeddings};

use crate::error::{Error, Result};
use crate::memory::rank;
use crate::record::{MemoryHit, MemoryRecord, RetrieveQuery};
use crate::rerank::RerankConfig;

/// Fewer candidates than this are left in their order: the mean of two or three vectors is no
/// background to measure against (with two, each centred vector is the other's opposite).
pub const MIN_CANDIDATES: usize = 5;

/// How many candidate vectors a [`NewerFirst`] keeps before it starts over.
const CACHE_LIMIT: usize = 10_000;

/// The order of `ranked` (indexes into `created_at` and `vectors`, best first) with every newer
/// restatement moved directly above the older memory it restates: pairs whose similarity after
/// centring on the mean of all `vectors` is at least `threshold`.
///
/// A memory the question names (`named`: it holds an identifier the question asks about, see
/// [`names`]) is never passed by one that does not: "what was ticket WX-48213 about" asks about
/// that ticket, not about a newer one with another number.
///
/// A moved memory passes only the memories from the older one down; the others keep their
/// order. Fewer than [`MIN_CANDIDATES`] vectors, or vectors of different lengths, leave the
/// order as it is.
pub fn reorder(
    ranked: &[usize],
    created_at: &[i64],
    vectors: &[Vec<f32>],
    named: &[bool],
    threshold: f64,
) -> Vec<usize> {
    let mut order = ranked.to_vec();
    let dims = vectors.first().map_or(0, Vec::len);
    if vectors.len() < MIN_CANDIDATES || dims == 0 || vectors.iter().any(|v| v.len() != dims) {
        return order;
    }
    let n = vectors.len() as f32;
    let mut mean = vec![0.0f32; dims];
    for v in vectors {
        for (m, x) in mean.iter_mut().zip(v) {
            *m += x / n;
        }
    }
    let centred: Vec<Vec<f32>> =
        vectors.iter().map(|v| v.iter().zip(&mean).map(|(x, m)| x - m).collect()).collect();
    let is_named = |i: usize| named.get(i).copied().unwrap_or(false);
    let restates = |newer: usize, older: usize| {
        created_at[newer] > created_at[older]
            && (is_named(newer) || !is_named(older))
            && cosine_similarity(&centred[newer], &centred[older]) >= threshold
    };
    // Each move lifts a strictly newer memory; a bound on the moves keeps a pathological
    // similarity pattern from cycling.
    let mut moves = order.len() * order.len();
    'scan: while moves > 0 {
        for i in 0..order.len() {
            // Nor does a memory the question does not name pass one it names on its way up.
            let passes =
                |j: usize, order: &[usize]| is_named(order[j]) || !order[i..j].iter().any(|&k| is_named(k));
            if let Some(j) = (i + 1..order.len()).find(|&j| restates(order[j], order[i]) && passes(j, &order))
            {
                let lifted = order.remove(j);
                order.insert(i, lifted);
                moves -= 1;
                continue 'scan;
            }
        }
        break;
    }
    order
}

/// Whether `content` holds an identifier of `question`: a word of two or more characters with a
/// digit in it (a ticket, an error code, a plate, a version), compared without case.
pub fn names(question: &str, content: &str) -> bool {
    let identifiers: Vec<String> =
        words(question).filter(|w| w.len() >= 2 && w.chars().any(|c| c.is_ascii_digit())).collect();
    !identifiers.is_empty() && words(content).any(|w| identifiers.contains(&w))
}

/// The lowercase words of `text`: runs of ASCII letters and digits joined by `-`, `_` or `.`,
/// trimmed of those. Other characters separate words, so an identifier written against Chinese
/// text ("是v2") is still a word of its own.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    let joins = |c: char| c == '-' || c == '_' || c == '.';
    text.split(move |c: char| !(c.is_ascii_alphanumeric() || joins(c)))
        .map(move |w| w.trim_matches(joins).to_ascii_lowercase())
        .filter(|w| !w.is_empty())
}

/// The reranking step with newer versions first: [`finish`](crate::backend::finish), then, when
/// the query reranks and [`RerankConfig::newer_first`] is set, [`reorder`] over every candidate
/// before the top k are kept.
///
/// The candidates' vectors come from the memory's embedding model, remembered per memory id, so
/// a memory is embedded again only the first time a retrieval finds it (the cache holds 10,000
/// vectors and then starts over). Clones share what they remember.
#[derive(Clone)]
pub struct NewerFirst {
    /// The model the memories were embedded with.
    embed: Arc<dyn DynEmbeddings>,
    /// Vectors by memory id; a memory's content never changes under its id.
    vectors: Arc<Mutex<HashMap<i64, Vec<f32>>>>,
}

impl std::fmt::Debug for NewerFirst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let remembered = self.vectors.lock().map_or(0, |v| v.len());
        f.debug_struct("NewerFirst").field("remembered", &remembered).finish_non_exhaustive()
    }
}

impl NewerFirst {
    /// The step for memories embedded with `embed`.
    pub fn new(embed: Arc<dyn DynEmbeddings>) -> Self {
        Self { embed, vectors: Arc::default() }
    }

    /// Remembers the vectors a backend computed when it stored memories `ids`, so that
    /// retrieving them needs no model call.
    pub fn remember(&self, ids: &[i64], vectors: &[Vec<f32>]) {
        let mut cache = self.vectors.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.len() + ids.len() > CACHE_LIMIT {
            cache.clear();
        }
        for (id, v) in ids.iter().zip(vectors) {
            cache.insert(*id, v.clone());
        }
    }

    /// Forgets memories `ids` (deleted).
    pub fn forget(&self, ids: &[i64]) {
        let mut cache = self.vectors.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for id in ids {
            cache.remove(id);
        }
    }

    /// Turns candidates into the final hits: dropped, reranked and ordered as
    /// [`finish`](crate::backend::finish) does, newer restatements moved up, the top k kept.
    ///
    /// # Errors
    /// [`Error::Embedding`] when the model fails on a candidate it has not seen.
    pub async fn finish(
        &self,
        candidates: Vec<(MemoryRecord, f64)>,
        query: &RetrieveQuery,
        rerank: &RerankConfig,
    ) -> Result<Vec<MemoryHit>> {
        let mut hits = rank(candidates, query, rerank);
        if let (true, Some(threshold)) = (query.rerank, rerank.newer_first) {
            if hits.len() >= MIN_CANDIDATES {
                hits = self.newer_first(hits, &query.query, threshold).await?;
            }
        }
        hits.truncate(query.top_k);
        Ok(hits)
    }

    async fn newer_first(
        &self,
        hits: Vec<MemoryHit>,
        question: &str,
        threshold: f64,
    ) -> Result<Vec<MemoryHit>> {
        let vectors = self.vectors_of(&hits).await?;
        let created: Vec<i64> = hits.iter().map(|h| h.record.created_at).collect();
        let named: Vec<bool> = hits.iter().map(|h| names(question, &h.record.content)).collect();
        let ranked: Vec<usize> = (0..hits.len()).collect();
        let order = reorder(&ranked, &created, &vectors, &named, threshold);
        let mut slots: Vec<Option<MemoryHit>> = hits.into_iter().map(Some).collect();
        let mut out: Vec<MemoryHit> = order.into_iter().filter_map(|i| slots[i].take()).collect();
        // Scores stay non-increasing down the list: a lifted memory takes the score of the one it
        // landed above.
        for k in (0..out.len().saturating_sub(1)).rev() {
            if out[k].score < out[k + 1].score {
                out[k].score = out[k + 1].score;
            }
        }
        Ok(out)
    }

    /// The vectors of `hits`' memories, embedding only those not remembered.
    async fn vectors_of(&self, hits: &[MemoryHit]) -> Result<Vec<Vec<f32>>> {
        let missing: Vec<(i64, String)> = {
            let cache = self.vectors.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            hits.iter()
                .filter(|h| !cache.contains_key(&h.record.id))
                .map(|h| (h.record.id, h.record.content.clone()))
                .collect()
        };
        let mut fresh: HashMap<i64, Vec<f32>> = HashMap::new();
        if !missing.is_empty() {
            let texts: Vec<String> = missing.iter().map(|m| m.1.clone()).collect();
            let vectors = self.embed.embed_documents(&texts).await.map_err(Error::Embedding)?;
            if vectors.len() != texts.len() {
                return Err(Error::Response {
                    detail: format!("{} vectors for {} texts", vectors.len(), texts.len()),
                });
            }
            let ids: Vec<i64> = missing.iter().map(|m| m.0).collect();
            self.remember(&ids, &vectors);
            fresh = ids.into_iter().zip(vectors).collect();
        }
        // What was just embedded is served from `fresh`, in case the cache started over meanwhile.
        let cache = self.vectors.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(hits
            .iter()
            .map(|h| fresh.get(&h.record.id).or_else(|| cache.get(&h.record.id)).cloned().unwrap_or_default())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    /// Memory 1 (the newest) restates memory 0 (the oldest); 2, 3 and 4 are unrelated.
    fn restated() -> ([i64; 5], Vec<Vec<f32>>) {
        let vectors = [
            [1.0, 0.8, 0.0, 0.0, 0.0],
            [1.0, 1.0, 0.1, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 1.0],
        ];
        ([1, 5, 2, 3, 4], vectors.iter().map(|v| unit(v)).collect())
    }

    #[test]
    fn a_newer_restatement_moves_directly_above_the_older() {
        let (created, vectors) = restated();
        assert_eq!(reorder(&[0, 2, 3, 4, 1], &created, &vectors, &[], 0.2), [1, 0, 2, 3, 4]);
        // Above the threshold of any pair: nothing moves.
        assert_eq!(reorder(&[0, 2, 3, 4, 1], &created, &vectors, &[], 1.01), [0, 2, 3, 4, 1]);
    }

    #[test]
    fn an_older_restatement_never_moves_up() {
        let created = [5, 1, 3, 4, 2];
        let vectors: Vec<Vec<f32>> = [
            [1.0, 0.8, 0.0, 0.0],
            [1.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, 0.7, 0.7],
        ]
        .iter()
        .map(|v| unit(v))
        .collect();
        assert_eq!(reorder(&[0, 2, 3, 4, 1], &created, &vectors, &[], 0.2), [0, 2, 3, 4, 1]);
    }

    #[test]
    fn few_or_ragged_candidates_keep_their_order() {
        let v = vec![vec![1.0, 0.0], vec![1.0, 0.1], vec![0.0, 1.0]];
        assert_eq!(reorder(&[0, 1, 2], &[1, 2, 3], &v, &[], 0.0), [0, 1, 2]);
        let ragged = vec![vec![1.0, 0.0]; 4].into_iter().chain([vec![1.0]]).collect::<Vec<_>>();
        assert_eq!(reorder(&[4, 3, 2, 1, 0], &[5, 4, 3, 2, 1], &ragged, &[], -1.0), [4, 3, 2, 1, 0]);
    }

    #[test]
    fn what_every_candidate_shares_does_not_count() {
        // All five share a large common component (a fixed reply): raw cosines are all high,
        // centred ones only for the pair that differs from the rest the same way.
        let shared = [3.0f32, 0.0, 0.0, 0.0, 0.0, 0.0];
        let own =
            [[0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]];
        let mut vectors: Vec<Vec<f32>> = own.iter().map(|o| unit(&add(&shared, o))).collect();
        vectors.push(unit(&add(&shared, &[0.0, 0.0, 0.0, 0.0, 1.0, 0.2])));
        vectors.push(unit(&add(&shared, &[0.0, 0.0, 0.0, 0.0, 1.0, -0.2])));
        let created = [5, 6, 7, 1, 9];
        // Raw cosine of any two is above 0.8: a plain threshold would lift every newer memory.
        assert!(cosine_similarity(&vectors[0], &vectors[1]) > 0.8);
        assert_eq!(reorder(&[3, 0, 1, 2, 4], &created, &vectors, &[], 0.5), [4, 3, 0, 1, 2]);
    }

    #[test]
    fn a_memory_the_question_names_is_not_passed_by_one_it_does_not() {
        let (created, vectors) = restated();
        let named = [true, false, false, false, false];
        assert_eq!(reorder(&[0, 2, 3, 4, 1], &created, &vectors, &named, 0.2), [0, 2, 3, 4, 1]);
        // Both named (or neither): the newer passes.
        let both = [true, true, false, false, false];
        assert_eq!(reorder(&[0, 2, 3, 4, 1], &created, &vectors, &both, 0.2), [1, 0, 2, 3, 4]);
    }

    #[test]
    fn identifiers_are_words_with_a_digit() {
        assert!(names("what was ticket WX-48213-K about?", "The ticket is wx-48213-k."));
        assert!(!names("what was ticket WX-48213-K about?", "The ticket is WX-48214-K."));
        assert!(!names("which number should I dial?", "My number is 139-2277-0846."));
        assert!(names("是v2.3还是别的？", "我们用的是V2.3版本。"), "a word with a digit, within CJK text");
        assert!(!names("是v2.3还是别的？", "我们用的是v2版本。"));
        assert!(!names("", "anything 42"));
    }

    fn add(a: &[f32], b: &[f32]) -> Vec<f32> {
        a.iter().zip(b).map(|(x, y)| x + y).collect()
    }
}
