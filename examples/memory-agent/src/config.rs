//! Which model, long-term memory and checkpointer to use, read from the environment, and
//! connecting to them with clear errors.
//!
//! The rule is explicit: a server is used only when its variable is set. With nothing set the
//! agent runs fully in process (offline model, embedded memory, in-memory checkpointer).

use std::str::FromStr;
use std::sync::Arc;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_core::checkpoint::{DynCheckpointer, InMemoryCheckpointer};
use mnemograph_memory::EmbeddedMemory;
use mnemograph_memory_milvus::{Consistency, MilvusConfig, MilvusMemory};
use mnemograph_models::{ChatModelExt, OpenAiChatModel, OpenAiConfig, SharedChatModel};

pub use crate::connect::CONNECT_TIMEOUT;
use crate::connect::{create_database, Service, MILVUS_HINT, MYSQL_HINT, REDIS_HINT};
use crate::embedder::EmbedderChoice;
use crate::error::{redact, Error, Result};
use crate::memory::AgentMemory;
use crate::offline::OfflineModel;

/// Milvus collection used when `MILVUS_COLLECTION` is unset.
pub const DEFAULT_COLLECTION: &str = "memory_agent";
/// Model used when `OPENAI_API_KEY` is set and `OPENAI_MODEL` is not.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// Redis key prefix of the agent's checkpoints.
pub const DEFAULT_REDIS_PREFIX: &str = "memory-agent";

/// The chat model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ModelChoice {
    /// [`OfflineModel`]: deterministic, no network (no `OPENAI_API_KEY`).
    Offline,
    /// An OpenAI-compatible endpoint (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MODEL`).
    OpenAi(OpenAiConfig),
}

/// The long-term memory.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryChoice {
    /// In process, lost on exit (no `MILVUS_URL`).
    Embedded,
    /// A Milvus collection.
    Milvus {
        /// `MILVUS_URL`, e.g. `http://127.0.0.1:19530`.
        url: String,
        /// `MILVUS_TOKEN` (`user:password` or an API key), if any.
        token: Option<String>,
        /// `MILVUS_COLLECTION` (default [`DEFAULT_COLLECTION`]).
        collection: String,
    },
}

/// The short-term memory (checkpointer).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CheckpointerChoice {
    /// In process, lost on exit.
    InMemory,
    /// LangGraph's MySQL tables (`MYSQL_URL`); the database is created when missing.
    MySql {
        /// The URL, naming a database.
        url: String,
    },
    /// Plain Redis (`REDIS_URL`); threads expire after 7 days.
    Redis {
        /// The URL.
        url: String,
        /// Key prefix (default [`DEFAULT_REDIS_PREFIX`]).
        prefix: String,
    },
}

/// Which checkpointer the `--checkpointer` flag asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointerKind {
    /// In memory, even if a URL is set.
    Memory,
    /// `MYSQL_URL`.
    MySql,
    /// `REDIS_URL`.
    Redis,
}

impl FromStr for CheckpointerKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "memory" => Ok(Self::Memory),
            "mysql" => Ok(Self::MySql),
            "redis" => Ok(Self::Redis),
            other => Err(Error::Invalid {
                what: "--checkpointer",
                reason: format!("`{other}` is not one of memory, mysql, redis"),
            }),
        }
    }
}

/// The agent's backends.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// The chat model.
    pub model: ModelChoice,
    /// Long-term memory.
    pub memory: MemoryChoice,
    /// The embedding model of long-term memory.
    pub embedder: EmbedderChoice,
    /// Short-term memory.
    pub checkpointer: CheckpointerChoice,
}

impl Config {
    /// Everything in process: offline model, embedded memory with the offline multilingual
    /// embeddings, in-memory checkpointer.
    pub fn embedded() -> Self {
        Self {
            model: ModelChoice::Offline,
            memory: MemoryChoice::Embedded,
            embedder: EmbedderChoice::default(),
            checkpointer: CheckpointerChoice::InMemory,
        }
    }

    /// Replaces the model.
    #[must_use]
    pub fn with_model(mut self, model: ModelChoice) -> Self {
        self.model = model;
        self
    }
    /// Replaces the long-term memory.
    #[must_use]
    pub fn with_memory(mut self, memory: MemoryChoice) -> Self {
        self.memory = memory;
        self
    }
    /// Replaces the embedding model.
    #[must_use]
    pub fn with_embedder(mut self, embedder: EmbedderChoice) -> Self {
        self.embedder = embedder;
        self
    }
    /// Replaces the checkpointer.
    #[must_use]
    pub fn with_checkpointer(mut self, checkpointer: CheckpointerChoice) -> Self {
        self.checkpointer = checkpointer;
        self
    }

    /// Reads the process environment; see [`from_lookup`](Self::from_lookup).
    ///
    /// # Errors
    /// As [`from_lookup`](Self::from_lookup).
    pub fn from_env(checkpointer: Option<CheckpointerKind>) -> Result<Self> {
        Self::from_lookup(|k| std::env::var(k).ok(), checkpointer)
    }

    /// Reads settings through `var` (empty values count as unset). `checkpointer` picks one when
    /// both `MYSQL_URL` and `REDIS_URL` are set, or forces the in-memory one.
    ///
    /// # Errors
    /// [`Error::Invalid`] when both checkpointer URLs are set and none is picked, when the
    /// picked one has no URL, or when the embedding settings are invalid
    /// ([`EmbedderChoice::from_lookup`]).
    pub fn from_lookup(
        var: impl Fn(&str) -> Option<String>,
        checkpointer: Option<CheckpointerKind>,
    ) -> Result<Self> {
        let var = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let model = match var("OPENAI_API_KEY") {
            None => ModelChoice::Offline,
            Some(key) => {
                let mut c =
                    OpenAiConfig::new(var("OPENAI_MODEL").unwrap_or_else(|| DEFAULT_MODEL.to_owned()))
                        .with_api_key(key);
                if let Some(url) = var("OPENAI_BASE_URL") {
                    c = c.with_base_url(url);
                }
                ModelChoice::OpenAi(c)
            }
        };
        let embedder = EmbedderChoice::from_lookup(var)?;
        let memory = match var("MILVUS_URL") {
            None => MemoryChoice::Embedded,
            Some(url) => MemoryChoice::Milvus {
                url,
                token: var("MILVUS_TOKEN"),
                collection: var("MILVUS_COLLECTION").unwrap_or_else(|| DEFAULT_COLLECTION.to_owned()),
            },
        };
        let (mysql, redis) = (var("MYSQL_URL"), var("REDIS_URL"));
        let needs = |name: &'static str| Error::Invalid {
            what: "--checkpointer",
            reason: format!("it needs {name} to be set"),
        };
        let redis_choice = |url| CheckpointerChoice::Redis { url, prefix: DEFAULT_REDIS_PREFIX.to_owned() };
        let checkpointer = match (checkpointer, mysql, redis) {
            (Some(CheckpointerKind::Memory), _, _) | (None, None, None) => CheckpointerChoice::InMemory,
            (Some(CheckpointerKind::MySql), None, _) => return Err(needs("MYSQL_URL")),
            (Some(CheckpointerKind::Redis), _, None) => return Err(needs("REDIS_URL")),
            (Some(CheckpointerKind::MySql) | None, Some(url), None)
            | (Some(CheckpointerKind::MySql), Some(url), Some(_)) => CheckpointerChoice::MySql { url },
            (Some(CheckpointerKind::Redis) | None, None, Some(url))
            | (Some(CheckpointerKind::Redis), Some(_), Some(url)) => redis_choice(url),
            (None, Some(_), Some(_)) => {
                return Err(Error::Invalid {
                    what: "environment",
                    reason:
                        "both MYSQL_URL and REDIS_URL are set; choose one with --checkpointer mysql|redis"
                            .to_owned(),
                })
            }
        };
        Ok(Self { model, memory, embedder, checkpointer })
    }

    /// The chat model.
    ///
    /// # Errors
    /// [`Error::Model`] when the OpenAI client cannot be built.
    pub fn chat_model(&self) -> Result<SharedChatModel> {
        Ok(match &self.model {
            ModelChoice::Offline => OfflineModel.shared(),
            ModelChoice::OpenAi(c) => OpenAiChatModel::new(c.clone())?.shared(),
        })
    }

    /// Loads the embedding model and connects the long-term memory, creating the Milvus
    /// collection when missing.
    ///
    /// # Errors
    /// [`Error::Embeddings`] when the embedding model cannot be set up,
    /// [`Error::Unreachable`] / [`Error::Timeout`] when Milvus does not answer,
    /// [`Error::Backend`] when it refuses the collection (one made for vectors of another length,
    /// for instance).
    pub async fn connect_memory(&self) -> Result<AgentMemory> {
        let embedder = self.embedder.load()?;
        let (url, token, collection) = match &self.memory {
            MemoryChoice::Embedded => {
                return Ok(EmbeddedMemory::from_arc(embedder).rerank(self.embedder.rerank()).into());
            }
            MemoryChoice::Milvus { url, token, collection } => (url, token, collection),
        };
        let svc = Service { name: "Milvus", url, default_port: 19530, hint: MILVUS_HINT };
        svc.probe().await?;
        // Strong reads: a session-2 question must see what session 1 wrote a moment ago.
        let mut c = MilvusConfig::new(url.clone())
            .collection(collection.clone())
            .consistency(Consistency::Strong)
            .rerank(self.embedder.rerank());
        if let Some(t) = token {
            c = c.token(t.clone());
        }
        let memory = svc.timed(MilvusMemory::connect(c, embedder)).await?;
        Ok(memory.into())
    }

    /// Connects the checkpointer. For MySQL it creates the database named in the URL when missing
    /// and runs `setup()` (LangGraph's migrations).
    ///
    /// # Errors
    /// [`Error::Unreachable`] / [`Error::Timeout`] when the server does not answer,
    /// [`Error::Backend`] when it refuses (credentials, privileges), [`Error::Invalid`] for a
    /// malformed URL.
    pub async fn connect_checkpointer(&self) -> Result<Arc<dyn DynCheckpointer>> {
        match &self.checkpointer {
            CheckpointerChoice::InMemory => Ok(Arc::new(InMemoryCheckpointer::new())),
            CheckpointerChoice::MySql { url } => {
                let svc = Service { name: "MySQL", url, default_port: 3306, hint: MYSQL_HINT };
                svc.probe().await?;
                svc.timed(create_database(url)).await?;
                let saver = svc.timed(MySqlCheckpointer::connect(url)).await?;
                svc.timed(saver.setup()).await?;
                Ok(Arc::new(saver))
            }
            CheckpointerChoice::Redis { url, prefix } => {
                let svc = Service { name: "Redis", url, default_port: 6379, hint: REDIS_HINT };
                svc.probe().await?;
                let saver =
                    svc.timed(RedisCheckpointer::builder().key_prefix(prefix.clone()).connect(url)).await?;
                Ok(Arc::new(saver))
            }
        }
    }

    /// One line per backend, for the start-up banner: model, memory (with its embeddings),
    /// checkpointer.
    pub fn describe(&self) -> [String; 3] {
        let model = match &self.model {
            ModelChoice::Offline => {
                "offline (deterministic, no network; set OPENAI_API_KEY for a real model)".into()
            }
            ModelChoice::OpenAi(c) => format!("{} at {}", c.model, c.base_url),
        };
        let memory = match &self.memory {
            MemoryChoice::Embedded => "embedded, in process (set MILVUS_URL for Milvus)".to_owned(),
            MemoryChoice::Milvus { url, collection, .. } => {
                format!("Milvus at {}, collection `{collection}`", redact(url))
            }
        };
        let memory = format!("{memory}; embeddings: {}", self.embedder.describe());
        let checkpointer = match &self.checkpointer {
            CheckpointerChoice::InMemory => "in memory (set MYSQL_URL or REDIS_URL to persist)".into(),
            CheckpointerChoice::MySql { url } => format!("MySQL at {}", redact(url)),
            CheckpointerChoice::Redis { url, prefix } => {
                format!("Redis at {}, key prefix `{prefix}`", redact(url))
            }
        };
        [model, memory, checkpointer]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_env::lookup;

    #[test]
    fn nothing_set_means_everything_in_process() {
        let c = Config::from_lookup(lookup(&[("MYSQL_URL", " ")]), None).unwrap();
        assert!(matches!(c.model, ModelChoice::Offline));
        assert_eq!(c.memory, MemoryChoice::Embedded);
        assert_eq!(c.checkpointer, CheckpointerChoice::InMemory);
    }

    #[test]
    fn each_variable_selects_its_backend() {
        let env = lookup(&[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"),
            ("MILVUS_URL", "http://127.0.0.1:19530"),
            ("REDIS_URL", "redis://127.0.0.1:6379/"),
        ]);
        let c = Config::from_lookup(env, None).unwrap();
        let ModelChoice::OpenAi(m) = &c.model else { panic!("{:?}", c.model) };
        assert_eq!((m.model.as_str(), m.base_url.as_str()), (DEFAULT_MODEL, "http://127.0.0.1:11434/v1"));
        assert!(
            matches!(&c.memory, MemoryChoice::Milvus { collection, .. } if collection == DEFAULT_COLLECTION)
        );
        assert!(matches!(c.checkpointer, CheckpointerChoice::Redis { .. }));
        assert!(!format!("{c:?}").contains("sk-test"), "the key must not be printed");
    }

    #[test]
    fn two_checkpointer_urls_need_a_choice() {
        let both = [("MYSQL_URL", "mysql://root@h/db"), ("REDIS_URL", "redis://h/")];
        let err = Config::from_lookup(lookup(&both), None).unwrap_err();
        assert!(err.to_string().contains("--checkpointer"), "{err}");
        let c = Config::from_lookup(lookup(&both), Some(CheckpointerKind::MySql)).unwrap();
        assert!(matches!(c.checkpointer, CheckpointerChoice::MySql { .. }));
        let err = Config::from_lookup(lookup(&[]), Some(CheckpointerKind::Redis)).unwrap_err();
        assert!(err.to_string().contains("REDIS_URL"), "{err}");
    }
}
