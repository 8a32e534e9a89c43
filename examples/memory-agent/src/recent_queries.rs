//! An embedding model that remembers the vectors of the last few queries it embedded.
//!
//! A question is embedded by the memory's search, and again by recall's own ordering
//! ([`Answers`](crate::Answers)) to match it against sentences and place it among subjects. The
//! two ask for the same text within one turn, so the second is served from here and a question
//! costs one pass of the model.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use mnemograph_core::store::{DynEmbeddings, Embeddings};
use mnemograph_core::BoxError;

/// How many queries are remembered: a turn's question and the enriched query, with room for a
/// few turns running at once.
const REMEMBERED: usize = 16;

/// Query texts and their vectors, oldest first.
type Remembered = VecDeque<(String, Vec<f32>)>;

/// Wraps a model; documents pass through, the last sixteen queries are remembered. Clones
/// share what they remember.
#[derive(Clone)]
pub struct RecentQueries {
    /// The model.
    inner: Arc<dyn DynEmbeddings>,
    /// What it remembers.
    recent: Arc<Mutex<Remembered>>,
}

impl std::fmt::Debug for RecentQueries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecentQueries")
            .field("dims", &DynEmbeddings::dims(&*self.inner))
            .finish_non_exhaustive()
    }
}

impl RecentQueries {
    /// `inner`, remembering its last queries.
    pub fn new(inner: Arc<dyn DynEmbeddings>) -> Self {
        Self { inner, recent: Arc::default() }
    }
}

impl Embeddings for RecentQueries {
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        DynEmbeddings::embed_documents(&*self.inner, texts).await
    }

    async fn embed_query(&self, text: &str) -> Result<Vec<f32>, BoxError> {
        let known = {
            let recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
            recent.iter().find(|(t, _)| t == text).map(|(_, v)| v.clone())
        };
        if let Some(v) = known {
            return Ok(v);
        }
        let v = DynEmbeddings::embed_query(&*self.inner, text).await?;
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() == REMEMBERED {
            recent.pop_front();
        }
        recent.push_back((text.to_owned(), v.clone()));
        Ok(v)
    }

    fn dims(&self) -> usize {
        DynEmbeddings::dims(&*self.inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Counts the texts it embeds; every vector is the text's length.
    #[derive(Default)]
    struct Counting(AtomicUsize);

    impl Embeddings for Counting {
        async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
        fn dims(&self) -> usize {
            1
        }
    }

    #[tokio::test]
    async fn a_query_asked_again_is_not_embedded_again() {
        let counting = Arc::new(Counting::default());
        let model = RecentQueries::new(Arc::clone(&counting) as Arc<dyn DynEmbeddings>);
        assert_eq!(Embeddings::embed_query(&model, "where do I live?").await.unwrap(), [16.0]);
        assert_eq!(Embeddings::embed_query(&model, "where do I live?").await.unwrap(), [16.0]);
        assert_eq!(counting.0.load(Ordering::SeqCst), 1);
        Embeddings::embed_documents(&model, &["where do I live?".to_owned()]).await.unwrap();
        assert_eq!(counting.0.load(Ordering::SeqCst), 2, "documents always pass through");
        for i in 0..REMEMBERED {
            Embeddings::embed_query(&model, &format!("q{i}")).await.unwrap();
        }
        Embeddings::embed_query(&model, "where do I live?").await.unwrap();
        assert_eq!(counting.0.load(Ordering::SeqCst), 3 + REMEMBERED, "the oldest is forgotten");
    }
}
