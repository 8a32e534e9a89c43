//! Settings read from the environment.

use std::net::SocketAddr;
use std::time::Duration;

use crate::error::{Error, Result};

/// Used when `MYSQL_URL` is not set.
pub const DEFAULT_MYSQL_URL: &str = "mysql://root@127.0.0.1:3306/mysql_chat";
/// Used when `BIND` is not set.
pub const DEFAULT_BIND: &str = "127.0.0.1:3000";
/// Token budget of the checkpointed conversation when `CHAT_CONTEXT_TOKENS` is not set (see
/// `TrimmingMiddleware`).
pub const DEFAULT_CONTEXT_TOKENS: usize = 6000;
/// Checkpoints kept per conversation when `CHAT_KEEP_CHECKPOINTS` is not set: the last few
/// rounds (a round writes four), enough to look at or go back to a recent step.
pub const DEFAULT_KEEP_CHECKPOINTS: usize = 20;

/// How the service is configured.
///
/// ```
/// let config = mysql_chat::Config::new("mysql://root@127.0.0.1:3306/chat", "127.0.0.1:0".parse().unwrap());
/// assert_eq!(config.lock_wait.as_secs(), 30);
/// assert_eq!(config.context_tokens, mysql_chat::config::DEFAULT_CONTEXT_TOKENS);
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Config {
    /// The database holding both the checkpoint tables and the legacy tables. Pool parameters
    /// (`max-connections`, `acquire-timeout`) may be given in the query string.
    pub mysql_url: String,
    /// The address the HTTP server listens on.
    pub bind: SocketAddr,
    /// How long a round waits for another round of the same conversation to finish.
    pub lock_wait: Duration,
    /// Connections reserved for conversation locks (each round in flight holds one; a
    /// conversation's other rounds wait in the process, without a connection).
    pub lock_connections: u32,
    /// Token budget of the checkpointed conversation (`CHAT_CONTEXT_TOKENS`): older turns are
    /// trimmed from the thread before each model call. The legacy `messages` table keeps them.
    pub context_tokens: usize,
    /// Checkpoints kept per conversation after each round (`CHAT_KEEP_CHECKPOINTS`, at least 1);
    /// older ones, and the blobs and writes only they used, are pruned.
    pub keep_checkpoints: usize,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password.
        f.debug_struct("Config")
            .field("mysql_url", &redact(&self.mysql_url))
            .field("bind", &self.bind)
            .field("lock_wait", &self.lock_wait)
            .field("lock_connections", &self.lock_connections)
            .field("context_tokens", &self.context_tokens)
            .field("keep_checkpoints", &self.keep_checkpoints)
            .finish()
    }
}

impl Config {
    /// A config for `mysql_url` and `bind`, with the default lock, trimming and pruning settings.
    pub fn new(mysql_url: impl Into<String>, bind: SocketAddr) -> Self {
        Self {
            mysql_url: mysql_url.into(),
            bind,
            lock_wait: Duration::from_secs(30),
            lock_connections: 16,
            context_tokens: DEFAULT_CONTEXT_TOKENS,
            keep_checkpoints: DEFAULT_KEEP_CHECKPOINTS,
        }
    }

    /// Reads `MYSQL_URL` (default [`DEFAULT_MYSQL_URL`]), `BIND` (default [`DEFAULT_BIND`]),
    /// `CHAT_CONTEXT_TOKENS` (default [`DEFAULT_CONTEXT_TOKENS`]) and `CHAT_KEEP_CHECKPOINTS`
    /// (default [`DEFAULT_KEEP_CHECKPOINTS`]).
    ///
    /// # Errors
    /// [`Error::Config`] when `BIND` is not a socket address, or a count is not a whole number
    /// of at least 1.
    pub fn from_env() -> Result<Self> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let url = var("MYSQL_URL").unwrap_or_else(|| DEFAULT_MYSQL_URL.to_owned());
        let bind_text = var("BIND").unwrap_or_else(|| DEFAULT_BIND.to_owned());
        let bind = bind_text.parse().map_err(|e: std::net::AddrParseError| Error::Config {
            var: "BIND",
            value: bind_text.clone(),
            reason: e.to_string(),
        })?;
        let mut config = Self::new(url, bind);
        if let Some(text) = var("CHAT_CONTEXT_TOKENS") {
            config.context_tokens = positive("CHAT_CONTEXT_TOKENS", &text)?;
        }
        if let Some(text) = var("CHAT_KEEP_CHECKPOINTS") {
            config.keep_checkpoints = positive("CHAT_KEEP_CHECKPOINTS", &text)?;
        }
        Ok(config)
    }
}

/// `text` as a whole number of at least 1, or the [`Error::Config`] naming `var`.
fn positive(var: &'static str, text: &str) -> Result<usize> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Error::Config {
            var,
            value: text.to_owned(),
            reason: "expected a whole number of at least 1".to_owned(),
        }),
    }
}

/// `url` with the password, if any, replaced by `***`, for logs: the workspace's one copy, shared
/// with the other tools that print connection URLs.
pub use mnemograph_core::checkpoint::backend::redact;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_positive_whole_numbers() {
        assert_eq!(positive("CHAT_CONTEXT_TOKENS", " 3000 ").unwrap(), 3000);
        for bad in ["0", "-1", "many", "1.5"] {
            let err = positive("CHAT_KEEP_CHECKPOINTS", bad).unwrap_err();
            assert!(matches!(err, Error::Config { var: "CHAT_KEEP_CHECKPOINTS", .. }), "{bad}");
        }
    }
}
