//! Settings read from the environment.

use std::net::SocketAddr;
use std::time::Duration;

use crate::error::{Error, Result};

/// Used when `MYSQL_URL` is not set.
pub const DEFAULT_MYSQL_URL: &str = "mysql://root@127.0.0.1:3306/mysql_chat";
/// Used when `BIND` is not set.
pub const DEFAULT_BIND: &str = "127.0.0.1:3000";

/// How the service is configured.
///
/// ```
/// let config = mysql_chat::Config::new("mysql://root@127.0.0.1:3306/chat", "127.0.0.1:0".parse().unwrap());
/// assert_eq!(config.lock_wait.as_secs(), 30);
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
    /// Connections reserved for conversation locks (each round in flight holds one).
    pub lock_connections: u32,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may carry a password.
        f.debug_struct("Config")
            .field("mysql_url", &redact(&self.mysql_url))
            .field("bind", &self.bind)
            .field("lock_wait", &self.lock_wait)
            .field("lock_connections", &self.lock_connections)
            .finish()
    }
}

impl Config {
    /// A config for `mysql_url` and `bind`, with the default lock settings.
    pub fn new(mysql_url: impl Into<String>, bind: SocketAddr) -> Self {
        Self { mysql_url: mysql_url.into(), bind, lock_wait: Duration::from_secs(30), lock_connections: 16 }
    }

    /// Reads `MYSQL_URL` (default [`DEFAULT_MYSQL_URL`]) and `BIND` (default [`DEFAULT_BIND`]).
    ///
    /// # Errors
    /// [`Error::Config`] when `BIND` is not a socket address.
    pub fn from_env() -> Result<Self> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let url = var("MYSQL_URL").unwrap_or_else(|| DEFAULT_MYSQL_URL.to_owned());
        let bind_text = var("BIND").unwrap_or_else(|| DEFAULT_BIND.to_owned());
        let bind = bind_text.parse().map_err(|e: std::net::AddrParseError| Error::Config {
            var: "BIND",
            value: bind_text.clone(),
            reason: e.to_string(),
        })?;
        Ok(Self::new(url, bind))
    }
}

/// `url` with the password, if any, replaced by `***`, for logs: the workspace's one copy, shared
/// with the other tools that print connection URLs.
pub use mnemograph_checkpoint_mysql::redact;
