//! BM25 keyword scoring in process, for the embedded memory's hybrid search (Milvus computes its
//! own with the BM25 function on `content`).

use std::collections::HashMap;

/// Okapi BM25's term-frequency saturation (the usual default, and Milvus's).
const K1: f64 = 1.2;
/// Okapi BM25's length normalisation (the usual default, and Milvus's).
const B: f64 = 0.75;

/// Terms are mnemograph-checkpoint's [`tokenize`]: the same words the embedded store's hashing embeddings see.
pub(crate) use mnemograph_checkpoint::store::tokenize;

/// The BM25 score of every document for `query`, in document order (0 when no term matches).
pub(crate) fn scores(query: &str, docs: &[&str]) -> Vec<f64> {
    scores_with(tokenize, query, docs)
}

/// [`scores`] with the terms of `terms`; tests compare tokenizers through it.
fn scores_with(terms: impl Fn(&str) -> Vec<String>, query: &str, docs: &[&str]) -> Vec<f64> {
    let docs: Vec<Vec<String>> = docs.iter().map(|d| terms(d)).collect();
    let n = docs.len() as f64;
    let avg_len = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let mut terms = terms(query);
    terms.sort();
    terms.dedup();
    let mut df: HashMap<&str, f64> = HashMap::new();
    for doc in &docs {
        for t in &terms {
            if doc.contains(t) {
                *df.entry(t.as_str()).or_default() += 1.0;
            }
        }
    }
    docs.iter()
        .map(|doc| {
            let len = doc.len() as f64;
            terms
                .iter()
                .filter_map(|t| {
                    let tf = doc.iter().filter(|w| *w == t).count() as f64;
                    let df = *df.get(t.as_str())?;
                    let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                    Some(idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg_len.max(1.0))))
                })
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bilingual;

    #[test]
    fn tokenizes_words_and_cjk() {
        assert_eq!(tokenize("FastAPI, perf-tuning!"), ["fastapi", "perf", "tuning"]);
        assert_eq!(tokenize("用Rust写"), ["用", "rust", "写"]);
        assert_eq!(tokenize("向量库"), ["向", "量", "向量", "库", "量库"]);
    }

    #[test]
    fn rare_terms_and_repeats_score_higher() {
        let docs = ["the cat sat", "the dog sat", "the the the", "fastapi fastapi tuning"];
        let s = scores("fastapi the", &docs);
        assert!(s[3] > s[0] && s[3] > s[2], "{s:?}");
        let s = scores("cat", &docs);
        assert!(s[0] > 0.0 && s[1] == 0.0);
        assert!(scores("nothing", &docs).iter().all(|&x| x == 0.0));
        assert!(scores("x", &[]).is_empty());
    }

    /// Recall@3 on the bilingual set of BM25 with the terms of `terms`.
    fn bilingual_recall(terms: fn(&str) -> Vec<String>) -> bilingual::Recall {
        let docs: Vec<&str> = bilingual::CASES.iter().map(|c| c.0).collect();
        bilingual::recall_at_3(|question| {
            let s = scores_with(terms, question, &docs);
            let mut hits: Vec<usize> = (0..s.len()).filter(|&i| s[i] > 0.0).collect();
            hits.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
            hits
        })
    }

    /// Runs of letters and digits, lower-cased: the terms of Milvus's `standard` analyzer, under
    /// which the Chinese between two punctuation marks is a single term.
    fn whole_runs(text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
    }

    #[test]
    fn chinese_questions_find_paraphrased_facts() {
        // A paraphrased Chinese question repeats some of its fact's words but never a whole
        // clause, so whole runs match nothing, while single characters and pairs match the
        // shared words. English is tokenized alike either way.
        let old = bilingual_recall(whole_runs);
        let new = bilingual_recall(tokenize);
        assert_eq!(old, bilingual::Recall { chinese: 0, english: 15 });
        assert_eq!(new, bilingual::Recall { chinese: 15, english: 15 });
        // The same through `scores`, which the embedded memory calls.
        let docs: Vec<&str> = bilingual::CASES.iter().map(|c| c.0).collect();
        let s = scores("点外卖有什么要注意的？", &docs);
        let best = (0..s.len()).max_by(|&a, &b| s[a].total_cmp(&s[b]));
        assert_eq!(best, Some(13), "{s:?}");
    }
}
