//! [`OpenAiEmbeddings`]: mnemograph-core's `Embeddings` over an OpenAI-compatible `/embeddings`.

use std::fmt;

use async_openai::config::OpenAIConfig as ClientConfig;
use async_openai::Client;
use mnemograph_core::store::Embeddings;
use mnemograph_core::BoxError;
use serde_json::{json, Value};

use super::config::OpenAiConfig;
use crate::error::{Error, Result};

/// Texts per request: well under OpenAI's 2,048-input cap, and small enough that one slow batch
/// does not hold a large request hostage.
const DEFAULT_BATCH_SIZE: usize = 256;

/// Text embeddings from an OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, DashScope...),
/// implementing [`mnemograph_core::store::Embeddings`] for the stores' vector search.
///
/// The vector length must be known up front (stores size their indexes with it): give it with
/// [`new`](Self::new); with [`send_dimensions`](Self::send_dimensions) it is also sent as the
/// `dimensions` parameter, which `text-embedding-3-*` models use to shorten vectors.
///
/// ```no_run
/// use mnemograph_core::store::Embeddings;
/// use mnemograph_models::{OpenAiConfig, OpenAiEmbeddings};
///
/// # async fn run() -> Result<(), mnemograph_core::BoxError> {
/// let embed = OpenAiEmbeddings::new(OpenAiConfig::from_env()?.with_model("text-embedding-3-small"), 1536)?;
/// let vectors = embed.embed_documents(&["红色的苹果".to_owned()]).await?;
/// assert_eq!(vectors[0].len(), 1536);
/// # Ok(()) }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
#[derive(Clone)]
pub struct OpenAiEmbeddings {
    /// The HTTP client.
    client: Client<ClientConfig>,
    /// Settings; `model` is the embedding model.
    config: OpenAiConfig,
    /// Vector length.
    dims: usize,
    /// Whether `dimensions` is sent.
    send_dimensions: bool,
    /// Texts per request.
    batch_size: usize,
}

impl fmt::Debug for OpenAiEmbeddings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiEmbeddings")
            .field("config", &self.config)
            .field("dims", &self.dims)
            .finish_non_exhaustive()
    }
}

impl OpenAiEmbeddings {
    /// Embeddings with `config.model`, producing `dims`-long vectors.
    ///
    /// # Errors
    /// [`Error::Client`] when the HTTP client cannot be built.
    pub fn new(config: OpenAiConfig, dims: usize) -> Result<Self> {
        Ok(Self {
            client: config.client()?,
            config,
            dims,
            send_dimensions: false,
            batch_size: DEFAULT_BATCH_SIZE,
        })
    }

    /// Also sends `dimensions` with each request.
    #[must_use]
    pub fn send_dimensions(mut self) -> Self {
        self.send_dimensions = true;
        self
    }

    /// Sets how many texts go in one request (at least 1).
    #[must_use]
    pub fn with_batch_size(mut self, batch_size: usize) -> Self {
        self.batch_size = batch_size.max(1);
        self
    }

    /// Embeds one batch, vectors in input order.
    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut body = json!({"model": self.config.model, "input": texts, "encoding_format": "float"});
        if self.send_dimensions {
            body["dimensions"] = json!(self.dims);
        }
        let reply: Value = self.client.embeddings().create_byot(body).await?;
        let data = reply.get("data").and_then(Value::as_array).ok_or(Error::MissingField("data"))?;
        let mut vectors: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in data.iter().enumerate() {
            // Providers are allowed to reorder; `index` says which input a vector belongs to.
            let index = item.get("index").and_then(Value::as_u64).map_or(position, |i| i as usize);
            let vector: Vec<f32> =
                serde_json::from_value(item.get("embedding").cloned().unwrap_or(Value::Null))
                    .map_err(|source| Error::Decode { source })?;
            if let Some(slot) = vectors.get_mut(index) {
                *slot = Some(vector);
            }
        }
        vectors.into_iter().map(|v| v.ok_or(Error::MissingField("data[].embedding"))).collect()
    }
}

impl Embeddings for OpenAiEmbeddings {
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        let mut out = Vec::with_capacity(texts.len());
        for batch in texts.chunks(self.batch_size) {
            out.extend(self.embed_batch(batch).await?);
        }
        if let Some(bad) = out.iter().find(|v| v.len() != self.dims) {
            let msg = format!("embedding model returned {} dimensions, expected {}", bad.len(), self.dims);
            return Err(BoxError::from(msg));
        }
        Ok(out)
    }

    fn dims(&self) -> usize {
        self.dims
    }
}
