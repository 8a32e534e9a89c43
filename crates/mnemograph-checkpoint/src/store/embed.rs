//! Text embeddings: the [`Embeddings`] trait that model crates implement, and a hashing stand-in
//! for tests.

use std::future::Future;
use std::sync::Arc;

use super::{BoxError, BoxFuture};

/// A text embedding model (LangChain's `Embeddings`).
///
/// This crate ships no model and no HTTP client; model crates implement this (an OpenAI-compatible
/// endpoint, a local all-MiniLM-L6-v2, ...). Implement it with `async fn`s; [`DynEmbeddings`] is
/// the object-safe twin every implementation gets.
pub trait Embeddings: Send + Sync + 'static {
    /// One vector of [`dims`](Self::dims) floats per text, in order.
    fn embed_documents(
        &self,
        texts: &[String],
    ) -> impl Future<Output = Result<Vec<Vec<f32>>, BoxError>> + Send;

    /// The vector of a search query. Defaults to embedding it as a document; models trained with
    /// query/document prefixes override it.
    fn embed_query(&self, text: &str) -> impl Future<Output = Result<Vec<f32>, BoxError>> + Send {
        let texts = [text.to_owned()];
        async move {
            let mut vectors = self.embed_documents(&texts).await?;
            vectors.pop().ok_or_else(|| BoxError::from("the embedding model returned no vector"))
        }
    }

    /// The length of every vector.
    fn dims(&self) -> usize;
}

/// The object-safe twin of [`Embeddings`], implemented for every model.
pub trait DynEmbeddings: Send + Sync + 'static {
    /// See [`Embeddings::embed_documents`].
    fn embed_documents<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, BoxError>>;
    /// See [`Embeddings::embed_query`].
    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, BoxError>>;
    /// See [`Embeddings::dims`].
    fn dims(&self) -> usize;
}

impl<T: Embeddings> DynEmbeddings for T {
    fn embed_documents<'a>(&'a self, texts: &'a [String]) -> BoxFuture<'a, Result<Vec<Vec<f32>>, BoxError>> {
        Box::pin(Embeddings::embed_documents(self, texts))
    }
    fn embed_query<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Vec<f32>, BoxError>> {
        Box::pin(Embeddings::embed_query(self, text))
    }
    fn dims(&self) -> usize {
        Embeddings::dims(self)
    }
}

// Lets a shared, type-erased model be handed to anything generic over `Embeddings`.
impl Embeddings for Arc<dyn DynEmbeddings> {
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        DynEmbeddings::embed_documents(&**self, texts).await
    }
    async fn embed_query(&self, text: &str) -> Result<Vec<f32>, BoxError> {
        DynEmbeddings::embed_query(&**self, text).await
    }
    fn dims(&self) -> usize {
        DynEmbeddings::dims(&**self)
    }
}

/// Cosine similarity of two vectors; `0.0` when either is all zeros or their lengths differ.
///
/// ```
/// use mnemograph_checkpoint::store::cosine_similarity;
/// assert!((cosine_similarity(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-9);
/// assert_eq!(cosine_similarity(&[1.0, 0.0], &[0.0, 3.0]), 0.0);
/// ```
pub fn cosine_similarity(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    // Accumulate in f64: 384+ products of f32 lose digits that ranking ties depend on.
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// A deterministic bag-of-words embedder **for unit tests and offline examples only**.
///
/// Each lowercased word (and each CJK character, plus each pair of adjacent CJK characters, since
/// Chinese has no spaces) is hashed into one of `dims` buckets with a hashed sign, then the vector
/// is L2-normalised. Texts sharing words are therefore similar and unrelated texts are near
/// orthogonal, which is enough to test ranking plumbing without a model. It knows nothing about
/// meaning: synonyms and paraphrases score zero. Use a real model in applications.
///
/// ```
/// use mnemograph_checkpoint::store::{cosine_similarity, Embeddings, HashingEmbeddings};
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let e = HashingEmbeddings::new(64);
/// let v = e.embed_documents(&["red apple".into(), "red car".into(), "blue sky".into()]).await.unwrap();
/// assert!(cosine_similarity(&v[0], &v[1]) > cosine_similarity(&v[0], &v[2]));
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HashingEmbeddings {
    /// Vector length.
    dims: usize,
}

impl HashingEmbeddings {
    /// An embedder producing `dims`-long vectors.
    ///
    /// # Panics
    /// When `dims` is 0.
    pub fn new(dims: usize) -> Self {
        assert!(dims > 0, "HashingEmbeddings needs at least one dimension");
        Self { dims }
    }

    /// The vector of one text, synchronously.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dims];
        for token in tokenize(text) {
            let h = xxhash_rust::xxh3::xxh3_64(token.as_bytes());
            let sign = if h >> 63 == 1 { -1.0 } else { 1.0 };
            v[(h % self.dims as u64) as usize] += sign;
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

impl Embeddings for HashingEmbeddings {
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        Ok(texts.iter().map(|t| self.embed(t)).collect())
    }
    fn dims(&self) -> usize {
        self.dims
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}')
}

/// Lowercased alphanumeric words; Chinese/Japanese/Korean runs, which have no spaces to split
/// on, become single characters and adjacent pairs. The tokens [`HashingEmbeddings`] hashes, and
/// a keyword scorer's terms (mnemograph-memory's in-process BM25 uses it), so both agree.
///
/// ```
/// use mnemograph_checkpoint::store::tokenize;
///
/// assert_eq!(tokenize("FastAPI, perf-tuning!"), ["fastapi", "perf", "tuning"]);
/// assert_eq!(tokenize("向量库"), ["向", "量", "向量", "库", "量库"]);
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_cjk: Option<char> = None;
    for c in text.chars() {
        if is_cjk(c) {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            out.push(c.to_string());
            if let Some(p) = prev_cjk {
                out.push(format!("{p}{c}"));
            }
            prev_cjk = Some(c);
            continue;
        }
        prev_cjk = None;
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else if !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}
