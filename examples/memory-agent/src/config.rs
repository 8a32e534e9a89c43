//! Which model, long-term memory and checkpointer to use, read from the environment, and
//! connecting to them with clear errors.
//!
//! The rule is explicit: a server is used only when its variable is set. With nothing set the
//! agent needs no server: offline model, and checkpoints and memories in two SQLite files under
//! the data directory ([`default_data_dir`]), so a second run remembers the first; `--ephemeral`
//! ([`Config::ephemeral`]) keeps them in process instead.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use mnemograph_checkpoint_sqlite::{SqliteCheckpointer, SqliteStore};
use mnemograph_core::checkpoint::{DynCheckpointer, InMemoryCheckpointer};
use mnemograph_core::store::{DynEmbeddings, IndexConfig};
use mnemograph_memory::EmbeddedMemory;
use mnemograph_models::{ChatModelExt, SharedChatModel};

use crate::embedder::EmbedderChoice;
use crate::endpoint::OpenAiEndpoint;
use crate::error::{redact, Error, Result};
use crate::features::Feature;
use crate::memory::AgentMemory;
use crate::offline::OfflineModel;

/// How long connecting to a server may take before the agent gives up with [`Error::Timeout`].
pub const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Milvus collection used when `MILVUS_COLLECTION` is unset.
pub const DEFAULT_COLLECTION: &str = "memory_agent";
/// Model used when `OPENAI_API_KEY` is set and `OPENAI_MODEL` is not.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// Redis key prefix of the agent's checkpoints.
pub const DEFAULT_REDIS_PREFIX: &str = "memory-agent";
/// The file of checkpoints in the data directory.
pub const CHECKPOINTS_FILE: &str = "checkpoints.sqlite";
/// The file of long-term memories in the data directory.
pub const MEMORIES_FILE: &str = "memories.sqlite";

/// Where the agent keeps its files when no server is named: `memory-agent` in the platform's
/// data directory, read through `var`. On Linux and other Unix systems that is `$XDG_DATA_HOME`,
/// else `$HOME/.local/share`; on macOS `$HOME/Library/Application Support`; on Windows
/// `%APPDATA%`. `None` when the variables it needs are unset (or relative, which the XDG rules
/// say to ignore).
pub fn default_data_dir(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |v: Option<String>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    let base = if cfg!(windows) {
        absolute(var("APPDATA"))
    } else if cfg!(target_os = "macos") {
        absolute(var("HOME")).map(|h| h.join("Library").join("Application Support"))
    } else {
        absolute(var("XDG_DATA_HOME"))
            .or_else(|| absolute(var("HOME")).map(|h| h.join(".local").join("share")))
    };
    base.map(|b| b.join("memory-agent"))
}

/// The chat model.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ModelChoice {
    /// [`OfflineModel`]: deterministic, no network (no `OPENAI_API_KEY`).
    Offline,
    /// An OpenAI-compatible endpoint (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MODEL`).
    OpenAi(OpenAiEndpoint),
}

/// The long-term memory.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MemoryChoice {
    /// In process, lost on exit (`--ephemeral`).
    Embedded,
    /// In process, kept in a SQLite file (no `MILVUS_URL`): records, vectors and all, in the
    /// tables of LangGraph's `SqliteStore`.
    File {
        /// The database file, created when missing.
        path: PathBuf,
    },
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
    /// In process, lost on exit (`--ephemeral`).
    InMemory,
    /// LangGraph's SQLite tables in a file (no server named).
    Sqlite {
        /// The database file, created when missing.
        path: PathBuf,
    },
    /// LangGraph's Postgres tables (`DATABASE_URL=postgres://…`); migrated when needed.
    Postgres {
        /// The URL, naming a database.
        url: String,
    },
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
    /// The SQLite file in the data directory, even if a URL is set.
    Sqlite,
    /// `DATABASE_URL` (a `postgres://` URL).
    Postgres,
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
            "sqlite" => Ok(Self::Sqlite),
            "postgres" => Ok(Self::Postgres),
            "mysql" => Ok(Self::MySql),
            "redis" => Ok(Self::Redis),
            other => Err(Error::Invalid {
                what: "--checkpointer",
                reason: format!("`{other}` is not one of memory, sqlite, postgres, mysql, redis"),
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
    /// Where the SQLite files are, when the agent keeps any.
    pub data_dir: Option<PathBuf>,
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
            data_dir: None,
        }
    }

    /// The same servers, with what would go to files kept in process instead, lost on exit
    /// (`--ephemeral`).
    #[must_use]
    pub fn ephemeral(mut self) -> Self {
        if matches!(self.memory, MemoryChoice::File { .. }) {
            self.memory = MemoryChoice::Embedded;
        }
        if matches!(self.checkpointer, CheckpointerChoice::Sqlite { .. }) {
            self.checkpointer = CheckpointerChoice::InMemory;
        }
        self.data_dir = None;
        self
    }

    /// Keeps in files in `dir` what no server holds (`--data-dir`): the memories unless Milvus
    /// has them, the checkpoints unless a server has them.
    #[must_use]
    pub fn in_data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        if matches!(self.memory, MemoryChoice::Embedded | MemoryChoice::File { .. }) {
            self.memory = MemoryChoice::File { path: dir.join(MEMORIES_FILE) };
        }
        if matches!(self.checkpointer, CheckpointerChoice::InMemory | CheckpointerChoice::Sqlite { .. }) {
            self.checkpointer = CheckpointerChoice::Sqlite { path: dir.join(CHECKPOINTS_FILE) };
        }
        self.data_dir = Some(dir);
        self
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

    /// Reads the process environment; see [`from_lookup`](Self::from_lookup), and checks that
    /// this build has every client the settings name ([`check_built`](Self::check_built)).
    ///
    /// # Errors
    /// As [`from_lookup`](Self::from_lookup), and [`Error::NotBuilt`].
    pub fn from_env(checkpointer: Option<CheckpointerKind>) -> Result<Self> {
        let config = Self::from_lookup(|k| std::env::var(k).ok(), checkpointer)?;
        config.check_built(Feature::compiled)?;
        Ok(config)
    }

    /// The clients these settings need, each with the setting that asks for it.
    pub fn needs(&self) -> Vec<(Feature, &'static str)> {
        let mut needs = Vec::new();
        if matches!(self.model, ModelChoice::OpenAi(_)) {
            needs.push((Feature::OpenAi, "OPENAI_API_KEY"));
        }
        if matches!(self.embedder, EmbedderChoice::OpenAi { .. }) {
            needs.push((Feature::OpenAi, "OPENAI_EMBEDDING_MODEL"));
        }
        if matches!(self.memory, MemoryChoice::Milvus { .. }) {
            needs.push((Feature::Milvus, "MILVUS_URL"));
        }
        match self.checkpointer {
            CheckpointerChoice::Postgres { .. } => needs.push((Feature::Postgres, "DATABASE_URL")),
            CheckpointerChoice::MySql { .. } => needs.push((Feature::MySql, "MYSQL_URL")),
            CheckpointerChoice::Redis { .. } => needs.push((Feature::Redis, "REDIS_URL")),
            CheckpointerChoice::InMemory | CheckpointerChoice::Sqlite { .. } => {}
        }
        needs
    }

    /// Checks, before anything connects, that every client the settings name is compiled in
    /// (`compiled` is [`Feature::compiled`] outside tests).
    ///
    /// # Errors
    /// [`Error::NotBuilt`] naming the first setting whose feature is off.
    pub fn check_built(&self, compiled: impl Fn(Feature) -> bool) -> Result<()> {
        self.needs().into_iter().try_for_each(|(feature, setting)| feature.require(setting, &compiled))
    }

    /// Reads settings through `var` (empty values count as unset). `checkpointer` picks one when
    /// several of `DATABASE_URL` (`postgres://`), `MYSQL_URL` and `REDIS_URL` are set, or forces
    /// the in-memory or SQLite one. What no server holds goes to files in [`default_data_dir`];
    /// without one (no `HOME`), it stays in process.
    ///
    /// # Errors
    /// [`Error::Invalid`] when several checkpointer URLs are set and none is picked, when the
    /// picked one has no URL, or when the embedding settings are invalid
    /// ([`EmbedderChoice::from_lookup`]).
    pub fn from_lookup(
        var: impl Fn(&str) -> Option<String>,
        checkpointer: Option<CheckpointerKind>,
    ) -> Result<Self> {
        let var = |k: &str| var(k).filter(|v| !v.trim().is_empty());
        let data_dir = default_data_dir(var);
        let model = match var("OPENAI_API_KEY") {
            None => ModelChoice::Offline,
            Some(key) => {
                let mut c =
                    OpenAiEndpoint::new(var("OPENAI_MODEL").unwrap_or_else(|| DEFAULT_MODEL.to_owned()), key);
                if let Some(url) = var("OPENAI_BASE_URL") {
                    c = c.with_base_url(url);
                }
                ModelChoice::OpenAi(c)
            }
        };
        let embedder = EmbedderChoice::from_lookup(var)?;
        let memory = match (var("MILVUS_URL"), &data_dir) {
            (None, None) => MemoryChoice::Embedded,
            (None, Some(dir)) => MemoryChoice::File { path: dir.join(MEMORIES_FILE) },
            (Some(url), _) => MemoryChoice::Milvus {
                url,
                token: var("MILVUS_TOKEN"),
                collection: var("MILVUS_COLLECTION").unwrap_or_else(|| DEFAULT_COLLECTION.to_owned()),
            },
        };
        let checkpointer = Self::checkpointer_from(&var, checkpointer, data_dir.as_deref())?;
        let data_dir = data_dir.filter(|_| {
            matches!(memory, MemoryChoice::File { .. })
                || matches!(checkpointer, CheckpointerChoice::Sqlite { .. })
        });
        Ok(Self { model, memory, embedder, checkpointer, data_dir })
    }

    /// The checkpointer the environment names, or the one `kind` picks.
    fn checkpointer_from(
        var: &impl Fn(&str) -> Option<String>,
        kind: Option<CheckpointerKind>,
        data_dir: Option<&Path>,
    ) -> Result<CheckpointerChoice> {
        let local = || match data_dir {
            Some(dir) => CheckpointerChoice::Sqlite { path: dir.join(CHECKPOINTS_FILE) },
            None => CheckpointerChoice::InMemory,
        };
        // `DATABASE_URL` is a common name: it counts only when it names Postgres.
        let postgres =
            var("DATABASE_URL").filter(|u| u.starts_with("postgres://") || u.starts_with("postgresql://"));
        let servers = [
            (CheckpointerKind::Postgres, "DATABASE_URL", postgres),
            (CheckpointerKind::MySql, "MYSQL_URL", var("MYSQL_URL")),
            (CheckpointerKind::Redis, "REDIS_URL", var("REDIS_URL")),
        ];
        let server = |kind: CheckpointerKind, url: String| match kind {
            CheckpointerKind::Postgres => CheckpointerChoice::Postgres { url },
            CheckpointerKind::MySql => CheckpointerChoice::MySql { url },
            _ => CheckpointerChoice::Redis { url, prefix: DEFAULT_REDIS_PREFIX.to_owned() },
        };
        match kind {
            Some(CheckpointerKind::Memory) => Ok(CheckpointerChoice::InMemory),
            Some(CheckpointerKind::Sqlite) => match data_dir {
                Some(dir) => Ok(CheckpointerChoice::Sqlite { path: dir.join(CHECKPOINTS_FILE) }),
                None => Err(Error::Invalid {
                    what: "--checkpointer",
                    reason: "sqlite needs a data directory: set HOME or XDG_DATA_HOME, or pass --data-dir"
                        .to_owned(),
                }),
            },
            Some(picked) => {
                let (_, name, url) =
                    servers.into_iter().find(|(k, _, _)| *k == picked).expect("every server kind is listed");
                let url = url.ok_or_else(|| Error::Invalid {
                    what: "--checkpointer",
                    reason: format!("it needs {name} to be set"),
                })?;
                Ok(server(picked, url))
            }
            None => {
                let mut set: Vec<(CheckpointerKind, &str, String)> =
                    servers.into_iter().filter_map(|(k, n, u)| Some((k, n, u?))).collect();
                match set.len() {
                    0 => Ok(local()),
                    1 => {
                        let (kind, _, url) = set.remove(0);
                        Ok(server(kind, url))
                    }
                    _ => {
                        let names: Vec<&str> = set.iter().map(|(_, n, _)| *n).collect();
                        Err(Error::Invalid {
                            what: "environment",
                            reason: format!(
                                "{} are all set; choose one with --checkpointer postgres|mysql|redis",
                                names.join(" and ")
                            ),
                        })
                    }
                }
            }
        }
    }

    /// The chat model.
    ///
    /// # Errors
    /// [`Error::Model`] when the OpenAI client cannot be built.
    pub fn chat_model(&self) -> Result<SharedChatModel> {
        match &self.model {
            ModelChoice::Offline => Ok(OfflineModel.shared()),
            ModelChoice::OpenAi(endpoint) => crate::clients::chat_model(endpoint),
        }
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
        self.connect_memory_with(self.embedder.load()?).await
    }

    /// [`connect_memory`](Self::connect_memory) with the embedding model already loaded.
    ///
    /// # Errors
    /// As [`connect_memory`](Self::connect_memory), the model's loading aside.
    pub async fn connect_memory_with(&self, embedder: Arc<dyn DynEmbeddings>) -> Result<AgentMemory> {
        match &self.memory {
            MemoryChoice::Embedded => {
                Ok(EmbeddedMemory::from_arc(embedder).rerank(self.embedder.rerank()).into())
            }
            MemoryChoice::File { path } => {
                let index = IndexConfig::from_arc(Arc::clone(&embedder)).fields(["content"]);
                let builder = SqliteStore::builder().index(index);
                let store =
                    open_file("SQLite memory", path, |target| async move { builder.connect(&target).await })
                        .await?;
                Ok(EmbeddedMemory::with_store(store)
                    .embeddings(embedder)
                    .rerank(self.embedder.rerank())
                    .into())
            }
            MemoryChoice::Milvus { url, token, collection } => {
                crate::clients::milvus_memory(
                    url,
                    token.as_deref(),
                    collection,
                    embedder,
                    self.embedder.rerank(),
                )
                .await
            }
        }
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
            CheckpointerChoice::Sqlite { path } => {
                let saver = open_file("SQLite checkpoints", path, |target| async move {
                    SqliteCheckpointer::connect(&target).await
                })
                .await?;
                Ok(Arc::new(saver))
            }
            CheckpointerChoice::Postgres { url } => crate::clients::postgres(url).await,
            CheckpointerChoice::MySql { url } => crate::clients::mysql(url).await,
            CheckpointerChoice::Redis { url, prefix } => crate::clients::redis(url, prefix).await,
        }
    }

    /// One line per backend, for the start-up banner: model, memory (with its embeddings),
    /// checkpointer.
    pub fn describe(&self) -> [String; 3] {
        let model = match &self.model {
            ModelChoice::Offline => {
                "offline (deterministic, no network; set OPENAI_API_KEY for a real model)".into()
            }
            ModelChoice::OpenAi(endpoint) => endpoint.describe(),
        };
        let memory = match &self.memory {
            MemoryChoice::Embedded => {
                "embedded, in process, lost on exit (set MILVUS_URL for Milvus)".to_owned()
            }
            MemoryChoice::File { path } => format!("embedded, kept in {}", path.display()),
            MemoryChoice::Milvus { url, collection, .. } => {
                format!("Milvus at {}, collection `{collection}`", redact(url))
            }
        };
        let memory = format!("{memory}; embeddings: {}", self.embedder.describe());
        let checkpointer = match &self.checkpointer {
            CheckpointerChoice::InMemory => "in memory, lost on exit".into(),
            CheckpointerChoice::Sqlite { path } => format!("SQLite, kept in {}", path.display()),
            CheckpointerChoice::Postgres { url } => format!("Postgres at {}", redact(url)),
            CheckpointerChoice::MySql { url } => format!("MySQL at {}", redact(url)),
            CheckpointerChoice::Redis { url, prefix } => {
                format!("Redis at {}, key prefix `{prefix}`", redact(url))
            }
        };
        [model, memory, checkpointer]
    }
}

/// Opens a SQLite file with `open`, creating its directory first; failures name the file.
async fn open_file<T, E, F>(what: &'static str, path: &Path, open: impl FnOnce(String) -> F) -> Result<T>
where
    F: std::future::Future<Output = Result<T, E>>,
    E: Into<mnemograph_core::BoxError>,
{
    let failed = |source: mnemograph_core::BoxError| Error::Backend {
        service: what,
        url: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| failed(e.into()))?;
    }
    let target = path.to_str().ok_or_else(|| failed("the path is not UTF-8".into()))?;
    open(target.to_owned()).await.map_err(|e| failed(e.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_env::lookup;

    #[test]
    fn nothing_set_means_files_in_the_data_directory() {
        let c = Config::from_lookup(lookup(&[("MYSQL_URL", " "), ("HOME", "/home/ada")]), None).unwrap();
        assert!(matches!(c.model, ModelChoice::Offline));
        if cfg!(not(any(windows, target_os = "macos"))) {
            let dir = PathBuf::from("/home/ada/.local/share/memory-agent");
            assert_eq!(c.memory, MemoryChoice::File { path: dir.join(MEMORIES_FILE) });
            assert_eq!(c.checkpointer, CheckpointerChoice::Sqlite { path: dir.join(CHECKPOINTS_FILE) });
            assert_eq!(c.data_dir, Some(dir));
            let xdg = Config::from_lookup(lookup(&[("HOME", "/home/ada"), ("XDG_DATA_HOME", "/data")]), None);
            assert_eq!(xdg.unwrap().data_dir, Some(PathBuf::from("/data/memory-agent")));
            // A relative XDG_DATA_HOME is ignored, as the XDG rules say.
            let relative =
                Config::from_lookup(lookup(&[("HOME", "/home/ada"), ("XDG_DATA_HOME", "data")]), None);
            assert_eq!(
                relative.unwrap().data_dir,
                Some(PathBuf::from("/home/ada/.local/share/memory-agent"))
            );
        }
        let gone = c.clone().ephemeral();
        assert_eq!(
            (gone.memory, gone.checkpointer, gone.data_dir),
            (MemoryChoice::Embedded, CheckpointerChoice::InMemory, None)
        );
        let moved = c.in_data_dir("/tmp/agent");
        assert_eq!(
            moved.memory,
            MemoryChoice::File { path: PathBuf::from("/tmp/agent").join(MEMORIES_FILE) }
        );
        // Without a home there is no data directory: everything stays in process.
        let homeless = Config::from_lookup(lookup(&[]), None).unwrap();
        assert_eq!(
            (homeless.memory, homeless.checkpointer),
            (MemoryChoice::Embedded, CheckpointerChoice::InMemory)
        );
        let err = Config::from_lookup(lookup(&[]), Some(CheckpointerKind::Sqlite)).unwrap_err();
        assert!(err.to_string().contains("--data-dir"), "{err}");
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
        assert_eq!(
            (m.model.as_str(), m.base_url.as_deref()),
            (DEFAULT_MODEL, Some("http://127.0.0.1:11434/v1"))
        );
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
        let pg = [("DATABASE_URL", "postgres://u@h/db"), ("REDIS_URL", "redis://h/")];
        let err = Config::from_lookup(lookup(&pg), None).unwrap_err().to_string();
        assert!(err.contains("DATABASE_URL and REDIS_URL"), "{err}");
        let c = Config::from_lookup(lookup(&pg), Some(CheckpointerKind::Postgres)).unwrap();
        assert_eq!(c.checkpointer, CheckpointerChoice::Postgres { url: "postgres://u@h/db".into() });
        // A DATABASE_URL naming another database is not ours to use.
        let c = Config::from_lookup(lookup(&[("DATABASE_URL", "sqlite://x.db")]), None).unwrap();
        assert!(!matches!(c.checkpointer, CheckpointerChoice::Postgres { .. }), "{c:?}");
        let c = Config::from_lookup(lookup(&both), Some(CheckpointerKind::MySql)).unwrap();
        assert!(matches!(c.checkpointer, CheckpointerChoice::MySql { .. }));
        let err = Config::from_lookup(lookup(&[]), Some(CheckpointerKind::Redis)).unwrap_err();
        assert!(err.to_string().contains("REDIS_URL"), "{err}");
    }
}
