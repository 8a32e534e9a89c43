//! An embedder that remembers its vectors: the MiniLM tests embed the same dataset texts and
//! questions again and again (every retrieval mode, every decider, every consolidation pass and,
//! in process, every retirement re-embeds a memory), and a forward pass of the model is most of
//! their running time. The model is deterministic, so a remembered vector is the vector the
//! model would compute; the tests measure retrieval, not the model's speed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mnemograph_checkpoint::store::Embeddings;
use mnemograph_checkpoint::BoxError;

/// Vectors by text, documents and queries apart (a model may embed them differently).
#[derive(Default)]
struct Cache {
    documents: HashMap<String, Arc<[f32]>>,
    queries: HashMap<String, Arc<[f32]>>,
}

/// `E` with every vector it computed remembered; clones share the model and the vectors.
pub struct Memoized<E> {
    model: Arc<E>,
    cache: Arc<Mutex<Cache>>,
}

impl<E> Clone for Memoized<E> {
    fn clone(&self) -> Self {
        Self { model: Arc::clone(&self.model), cache: Arc::clone(&self.cache) }
    }
}

impl<E: Embeddings> Memoized<E> {
    /// Wraps `model` with an empty cache.
    pub fn new(model: E) -> Self {
        Self { model: Arc::new(model), cache: Arc::default() }
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<E: Embeddings> Embeddings for Memoized<E> {
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        let missing: Vec<String> = {
            let cache = self.cache();
            let mut missing: Vec<String> =
                texts.iter().filter(|t| !cache.documents.contains_key(*t)).cloned().collect();
            missing.sort_unstable();
            missing.dedup();
            missing
        };
        if !missing.is_empty() {
            // One batch for everything not seen yet, as the caller would have sent it.
            let vectors = self.model.embed_documents(&missing).await?;
            if vectors.len() != missing.len() {
                return Err(format!("{} vectors for {} texts", vectors.len(), missing.len()).into());
            }
            let mut cache = self.cache();
            for (text, vector) in missing.into_iter().zip(vectors) {
                cache.documents.insert(text, vector.into());
            }
        }
        let cache = self.cache();
        Ok(texts.iter().map(|t| cache.documents[t].to_vec()).collect())
    }

    async fn embed_query(&self, text: &str) -> Result<Vec<f32>, BoxError> {
        if let Some(v) = self.cache().queries.get(text) {
            return Ok(v.to_vec());
        }
        let vector = self.model.embed_query(text).await?;
        self.cache().queries.insert(text.to_owned(), vector.as_slice().into());
        Ok(vector)
    }

    fn dims(&self) -> usize {
        self.model.dims()
    }
}
