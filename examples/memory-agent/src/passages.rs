//! Matching a question against each sentence a user said, not only against the whole exchange.
//!
//! A memory is a whole exchange, embedded as one text: the user's words and the assistant's
//! reply. A fact said inside a longer message ("Long week. … I drive a Corolla. Anyway, …") is
//! then one part of a vector that also holds the rest of the message, and the reply every
//! statement shares. [`Passages`] embeds each sentence of the user's words on its own and scores a
//! memory by the sentence that answers the question best.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mnemograph_core::store::{cosine_similarity, DynEmbeddings};
use mnemograph_core::BoxError;

/// How many sentence vectors a [`Passages`] keeps before it starts over.
const CACHE_LIMIT: usize = 20_000;

/// The sentences of `text`: split after `.`, `!`, `?`, `;` (and their Chinese forms) and at line
/// breaks, trimmed, empty ones left out. A full stop between two digits ("v2.3") does not split.
///
/// ```
/// use memory_agent::sentences;
/// assert_eq!(sentences("Long week. I drive a Corolla! v2.3 works"), ["Long week.", "I drive a Corolla!", "v2.3 works"]);
/// assert_eq!(sentences("这周太忙了。我开的是思域。"), ["这周太忙了。", "我开的是思域。"]);
/// ```
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(at, c)) in chars.iter().enumerate() {
        let next = chars.get(i + 1).map(|n| n.1);
        let ends = match c {
            '!' | '?' | ';' | '。' | '！' | '？' | '；' | '\n' => true,
            // "v2.3", "e.g." and "3.5" are not sentence ends; a full stop before a space or the end is.
            '.' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        if ends {
            let end = at + c.len_utf8();
            out.push(text[start..end].trim());
            start = end;
        }
    }
    out.push(text[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// Scores memories by their best sentence against a question, with the embedding model the
/// memory uses. Sentence vectors are remembered by their text (the cache holds 20,000 and then
/// starts over), so each sentence is embedded once however often it is recalled. Clones share
/// what they remember.
#[derive(Clone)]
pub struct Passages {
    /// The model.
    embed: Arc<dyn DynEmbeddings>,
    /// Vectors by sentence.
    vectors: Arc<Mutex<HashMap<String, Arc<[f32]>>>>,
}

impl std::fmt::Debug for Passages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let remembered = self.vectors.lock().map_or(0, |v| v.len());
        f.debug_struct("Passages").field("remembered", &remembered).finish_non_exhaustive()
    }
}

impl Passages {
    /// Passages embedded with `embed`.
    pub fn new(embed: Arc<dyn DynEmbeddings>) -> Self {
        Self { embed, vectors: Arc::default() }
    }

    /// For each of `texts`, the cosine similarity of `question` to its best sentence.
    ///
    /// # Errors
    /// The model's failure.
    pub async fn best(&self, question: &str, texts: &[&str]) -> Result<Vec<f64>, BoxError> {
        Ok(self.embed(question, texts).await?.best())
    }

    /// Embeds the sentences of `texts` not seen before, so that a later question finds them
    /// ready: a statement's sentences are embedded as it is saved, not while a question waits.
    ///
    /// # Errors
    /// The model's failure.
    pub async fn remember(&self, texts: &[&str]) -> Result<(), BoxError> {
        let missing = self.missing(texts);
        if missing.is_empty() {
            return Ok(());
        }
        let vectors = self.embed.embed_documents(&missing).await?;
        let mut cache = self.vectors.lock().unwrap_or_else(PoisonError::into_inner);
        if cache.len() + missing.len() > CACHE_LIMIT {
            cache.clear();
        }
        cache.extend(missing.into_iter().zip(vectors.into_iter().map(Arc::from)));
        Ok(())
    }

    /// The sentences of `texts` not in the cache, each once.
    fn missing(&self, texts: &[&str]) -> Vec<String> {
        let cache = self.vectors.lock().unwrap_or_else(PoisonError::into_inner);
        let mut missing: Vec<String> = texts
            .iter()
            .flat_map(|t| sentences(t))
            .filter(|s| !cache.contains_key(*s))
            .map(str::to_owned)
            .collect();
        missing.sort_unstable();
        missing.dedup();
        missing
    }

    /// The vector of `question` and of each sentence of each of `texts`. The question is embedded
    /// once; each sentence only if it was not seen before.
    ///
    /// # Errors
    /// The model's failure.
    pub async fn embed(&self, question: &str, texts: &[&str]) -> Result<Embedded, BoxError> {
        let sentences = self.sentence_vectors(texts).await?;
        let question = self.embed.embed_query(question).await?;
        Ok(Embedded { question, sentences })
    }

    /// The vector of each sentence of each of `texts`, embedding only those not seen before.
    ///
    /// # Errors
    /// The model's failure.
    pub async fn sentence_vectors(&self, texts: &[&str]) -> Result<Vec<Vec<Arc<[f32]>>>, BoxError> {
        let split: Vec<Vec<&str>> = texts.iter().map(|t| sentences(t)).collect();
        let missing = self.missing(texts);
        let fresh: HashMap<String, Arc<[f32]>> = if missing.is_empty() {
            HashMap::new()
        } else {
            let vectors = self.embed.embed_documents(&missing).await?;
            missing.into_iter().zip(vectors.into_iter().map(Arc::from)).collect()
        };
        let mut cache = self.vectors.lock().unwrap_or_else(PoisonError::into_inner);
        let vectors = split
            .iter()
            .map(|parts| {
                parts.iter().filter_map(|s| fresh.get(*s).or_else(|| cache.get(*s)).cloned()).collect()
            })
            .collect();
        if cache.len() + fresh.len() > CACHE_LIMIT {
            cache.clear();
        }
        cache.extend(fresh);
        Ok(vectors)
    }
}

/// A question's vector and the sentence vectors of the texts it is matched against.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// The question's vector.
    pub question: Vec<f32>,
    /// Per text, the vector of each of its sentences.
    pub sentences: Vec<Vec<Arc<[f32]>>>,
}

impl Embedded {
    /// For each text, the cosine similarity of the question to its best sentence.
    pub fn best(&self) -> Vec<f64> {
        self.sentences
            .iter()
            .map(|parts| parts.iter().map(|v| cosine_similarity(&self.question, v)).fold(f64::MIN, f64::max))
            .collect()
    }
}
