//! [`Config`]: where the services are and which model answers, read from the environment.

use std::time::Duration;

use mnemograph_checkpoint_redis::DEFAULT_TTL;
use mnemograph_models::{OpenAiConfig, OPENAI_BASE_URL};

use crate::error::{Error, Result};

/// Used when `REDIS_URL` is unset.
pub const DEFAULT_REDIS_URL: &str = "redis://127.0.0.1:6379/";
/// Used when `MYSQL_URL` is unset; the database is created when missing.
pub const DEFAULT_MYSQL_URL: &str = "mysql://root@127.0.0.1:3306/blog_assistant";
/// Used when `BIND` is unset.
pub const DEFAULT_BIND: &str = "127.0.0.1:8000";
/// Used when `OPENAI_MODEL` is unset but `OPENAI_API_KEY` is set.
pub const DEFAULT_OPENAI_MODEL: &str = "gpt-4o-mini";
/// Token budget of the checkpointed conversation (see `TrimmingMiddleware`).
pub const DEFAULT_CONTEXT_TOKENS: usize = 6000;
/// Pause between two streamed tokens of the offline model, so streaming is visible.
pub const DEFAULT_TOKEN_DELAY: Duration = Duration::from_millis(15);

/// Which chat model answers.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ModelChoice {
    /// An OpenAI-compatible endpoint (`OPENAI_API_KEY` set).
    OpenAi(OpenAiConfig),
    /// The example's deterministic offline model, which needs no network.
    Offline {
        /// Pause before each streamed token.
        token_delay: Duration,
    },
}

/// The service's settings.
///
/// ```
/// use blog_assistant::Config;
///
/// let config = Config::offline("redis://127.0.0.1:6379/13", "mysql://root@127.0.0.1/blog_test")
///     .with_bind("127.0.0.1:0");
/// assert_eq!(config.redis_prefix, "blog:cp");
/// assert_eq!(config.checkpoint_ttl.as_secs(), 7 * 24 * 3600);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// Redis holding the checkpoints (`REDIS_URL`).
    pub redis_url: String,
    /// Prefix of every checkpoint key.
    pub redis_prefix: String,
    /// How long a thread's checkpoints live after its last write (7 days).
    pub checkpoint_ttl: Duration,
    /// MySQL/MariaDB holding the `chat_messages` archive (`MYSQL_URL`).
    pub mysql_url: String,
    /// Address to listen on (`BIND`); port 0 picks a free one.
    pub bind: String,
    /// Token budget of the checkpointed conversation.
    pub context_tokens: usize,
    /// The model.
    pub model: ModelChoice,
    /// Bearer tokens of the LangGraph API server, `user:token,user:token` (`AUTH_TOKENS`): each
    /// user reaches only its own threads and archive. `None` serves one local user, on loopback
    /// only.
    pub auth_tokens: Option<String>,
}

impl Config {
    /// Settings with the offline model and defaults for everything else.
    pub fn offline(redis_url: impl Into<String>, mysql_url: impl Into<String>) -> Self {
        Self {
            redis_url: redis_url.into(),
            redis_prefix: "blog:cp".to_owned(),
            checkpoint_ttl: DEFAULT_TTL,
            mysql_url: mysql_url.into(),
            bind: DEFAULT_BIND.to_owned(),
            context_tokens: DEFAULT_CONTEXT_TOKENS,
            model: ModelChoice::Offline { token_delay: DEFAULT_TOKEN_DELAY },
            auth_tokens: None,
        }
    }

    /// Reads `REDIS_URL`, `MYSQL_URL`, `BIND`, `AUTH_TOKENS`, and for the model `OPENAI_API_KEY`,
    /// `OPENAI_BASE_URL`, `OPENAI_MODEL` (without a key: the offline model, whose token pace
    /// `OFFLINE_TOKEN_DELAY_MS` sets).
    ///
    /// # Errors
    /// [`Error::Config`] when `OFFLINE_TOKEN_DELAY_MS` is not a number.
    pub fn from_env() -> Result<Self> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let mut config = Self::offline(
            var("REDIS_URL").unwrap_or_else(|| DEFAULT_REDIS_URL.to_owned()),
            var("MYSQL_URL").unwrap_or_else(|| DEFAULT_MYSQL_URL.to_owned()),
        );
        if let Some(bind) = var("BIND") {
            config.bind = bind;
        }
        config.auth_tokens = var("AUTH_TOKENS");
        config.model = match var("OPENAI_API_KEY") {
            Some(key) => {
                let model = var("OPENAI_MODEL").unwrap_or_else(|| DEFAULT_OPENAI_MODEL.to_owned());
                let base = var("OPENAI_BASE_URL").unwrap_or_else(|| OPENAI_BASE_URL.to_owned());
                ModelChoice::OpenAi(OpenAiConfig::new(model).with_api_key(key).with_base_url(base))
            }
            None => {
                let token_delay = match var("OFFLINE_TOKEN_DELAY_MS") {
                    Some(ms) => Duration::from_millis(ms.trim().parse().map_err(|_| Error::Config {
                        name: "OFFLINE_TOKEN_DELAY_MS",
                        reason: format!("`{ms}` is not a whole number of milliseconds"),
                    })?),
                    None => DEFAULT_TOKEN_DELAY,
                };
                ModelChoice::Offline { token_delay }
            }
        };
        Ok(config)
    }

    /// Sets the listen address.
    #[must_use]
    pub fn with_bind(mut self, bind: impl Into<String>) -> Self {
        self.bind = bind.into();
        self
    }

    /// Sets the API server's bearer tokens, `user:token,user:token`.
    #[must_use]
    pub fn with_auth_tokens(mut self, tokens: impl Into<String>) -> Self {
        self.auth_tokens = Some(tokens.into());
        self
    }

    /// Sets the model.
    #[must_use]
    pub fn with_model(mut self, model: ModelChoice) -> Self {
        self.model = model;
        self
    }
}
