//! BM25 keyword scoring in process, for the embedded memory's hybrid search (Milvus computes its
//! own with the BM25 function on `content`).

use std::collections::HashMap;

/// Okapi BM25's term-frequency saturation (the usual default, and Milvus's).
const K1: f64 = 1.2;
/// Okapi BM25's length normalisation (the usual default, and Milvus's).
const B: f64 = 0.75;

/// Terms are graph-core's [`tokenize`]: the same words the embedded store's hashing embeddings see.
pub(crate) use graph_core::store::tokenize;

/// The BM25 score of every document for `query`, in document order (0 when no term matches).
pub(crate) fn scores(query: &str, docs: &[&str]) -> Vec<f64> {
    let docs: Vec<Vec<String>> = docs.iter().map(|d| tokenize(d)).collect();
    let n = docs.len() as f64;
    let avg_len = docs.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0);
    let mut terms = tokenize(query);
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
}
