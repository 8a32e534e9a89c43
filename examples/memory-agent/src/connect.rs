//! Connecting to the servers named in the environment: a fast reachability probe, a time limit,
//! and errors that name the service and what to do.

use std::future::Future;

use mnemograph_core::BoxError;

use crate::config::CONNECT_TIMEOUT;
use crate::error::{redact, Error, Result};

/// What to do when Milvus does not answer.
#[cfg(feature = "milvus")]
pub(crate) const MILVUS_HINT: &str =
    "start one with `bash scripts/milvus-lite.sh`, or unset MILVUS_URL to keep memories in the data directory";
/// What to do when MySQL does not answer.
#[cfg(feature = "mysql")]
pub(crate) const MYSQL_HINT: &str =
    "start MariaDB/MySQL, or unset MYSQL_URL to keep checkpoints in the data directory";
/// What to do when Postgres does not answer.
#[cfg(feature = "postgres")]
pub(crate) const POSTGRES_HINT: &str =
    "start PostgreSQL, or unset DATABASE_URL to keep checkpoints in the data directory";
/// What to do when Redis does not answer.
#[cfg(feature = "redis")]
pub(crate) const REDIS_HINT: &str =
    "start Redis, or unset REDIS_URL to keep checkpoints in the data directory";

/// A server named by an environment variable, for error messages.
pub(crate) struct Service<'a> {
    /// `MySQL`, `Postgres`, `Redis` or `Milvus`.
    pub(crate) name: &'static str,
    /// The URL from the environment (redacted before it is printed).
    pub(crate) url: &'a str,
    /// The port when the URL names none.
    pub(crate) default_port: u16,
    /// One of the `*_HINT`s.
    pub(crate) hint: &'static str,
}

impl Service<'_> {
    /// Fails fast with [`Error::Unreachable`] when nothing accepts TCP connections at the URL's
    /// host and port: clients differ in how long they retry, and a refused port should say so at
    /// once. URLs without a host (Unix sockets) are left to the client.
    pub(crate) async fn probe(&self) -> Result<()> {
        let Some(addr) = host_port(self.url, self.default_port) else { return Ok(()) };
        match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr.as_str())).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(self.unreachable(e.into())),
            Err(_) => Err(self.timeout()),
        }
    }

    /// Runs a client call under [`CONNECT_TIMEOUT`]; its failure is the server refusing us.
    pub(crate) async fn timed<T, E: Into<BoxError>>(
        &self,
        call: impl Future<Output = Result<T, E>>,
    ) -> Result<T> {
        match tokio::time::timeout(CONNECT_TIMEOUT, call).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(Error::Backend { service: self.name, url: redact(self.url), source: e.into() }),
            Err(_) => Err(self.timeout()),
        }
    }

    fn unreachable(&self, source: BoxError) -> Error {
        Error::Unreachable { service: self.name, url: redact(self.url), hint: self.hint, source }
    }

    fn timeout(&self) -> Error {
        Error::Timeout {
            service: self.name,
            url: redact(self.url),
            seconds: CONNECT_TIMEOUT.as_secs(),
            hint: self.hint,
        }
    }
}

/// `host:port` of a URL (`scheme://[user[:pass]@]host[:port][/…]`), or `None` when it has no host.
fn host_port(url: &str, default_port: u16) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() {
        return None;
    }
    // A port is present when the text after the last ':' is digits and outside IPv6 brackets.
    let has_port =
        host.rsplit_once(':').is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            && !host.ends_with(']');
    Some(if has_port { host.to_owned() } else { format!("{host}:{default_port}") })
}

/// Creates the database named in a MySQL URL when it does not exist: the saver's `setup()` makes
/// tables, not databases, and a fresh server has neither.
#[cfg(feature = "mysql")]
pub(crate) async fn create_database(url: &str) -> Result<(), BoxError> {
    use std::str::FromStr;

    use mnemograph_checkpoint_mysql::MySqlConnectOptions;
    use sqlx::Connection;

    let options = MySqlConnectOptions::from_str(url)?;
    let Some(db) = options.get_database().map(str::to_owned) else {
        return Err("MYSQL_URL must name a database, e.g. mysql://root@127.0.0.1:3306/memory_agent".into());
    };
    if db.contains('`') {
        return Err("the database name in MYSQL_URL may not contain a backtick".into());
    }
    // `information_schema` always exists, so this connects before `db` does.
    let mut conn = sqlx::MySqlConnection::connect_with(&options.database("information_schema")).await?;
    sqlx::raw_sql(&format!("CREATE DATABASE IF NOT EXISTS `{db}` CHARACTER SET utf8mb4"))
        .execute(&mut conn)
        .await?;
    conn.close().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_come_from_any_url_shape() {
        assert_eq!(host_port("mysql://root:pw@db:3307/app?x=1", 3306).as_deref(), Some("db:3307"));
        assert_eq!(host_port("redis://127.0.0.1/", 6379).as_deref(), Some("127.0.0.1:6379"));
        assert_eq!(host_port("http://[::1]", 19530).as_deref(), Some("[::1]:19530"));
        assert_eq!(host_port("redis+unix:///tmp/redis.sock", 6379), None);
    }
}
