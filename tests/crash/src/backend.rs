//! The savers under test, as the worker and the harness connect to them, and how the harness
//! makes sure a killed worker's server sessions are gone before it looks at the saver.
//!
//! Why wait for sessions: SIGKILL closes the worker's sockets, but a request it had already sent
//! (a `COMMIT`, a Lua script) may still be executed by the server a moment later. If the harness
//! read the saver, or the next worker started, before that, the harness would blame the engine for
//! a write that was merely late, and the next worker could fork the thread from a checkpoint about
//! to be superseded. Each worker announces its server session ids when it is ready; after a kill
//! the harness waits until the server has closed all of them. A session that closes has finished
//! (or rolled back) whatever it was doing.

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlConnectOptions, MySqlPoolOptions};
use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_checkpoint_sqlite::{connect_options, SqliteCheckpointer};
use mnemograph_core::checkpoint::DynCheckpointer;
use redis::aio::ConnectionManager;
use sqlx::{Connection, MySqlConnection, SqliteConnection};

use crate::error::{Error, Result};

/// The MySQL database the harness uses: its own, so nothing else's tables or sessions are touched.
pub const MYSQL_DATABASE: &str = "crash_test";
/// Connections of a worker's MySQL pool: enough for every task of a fan-out step to save its
/// writes at once. All are opened up front so their session ids are known.
const WORKER_MYSQL_CONNECTIONS: usize = 4;
/// How long an unreachable server is waited for before the test skips.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Redis threads outlive a crashed harness by at most this long.
const REDIS_TTL: Duration = Duration::from_secs(3600);

/// A saver under test and where it lives.
#[derive(Debug, Clone)]
pub enum Backend {
    /// [`MySqlCheckpointer`] on database `database` of the server at `url`.
    MySql {
        /// Server URL (its database part is replaced by `database`).
        url: String,
        /// The database.
        database: String,
    },
    /// [`RedisCheckpointer`] with keys under `prefix`.
    Redis {
        /// Server URL.
        url: String,
        /// Key prefix, unique to one harness run.
        prefix: String,
    },
    /// [`SqliteCheckpointer`] on the database file `path`. There is no server: a killed worker's
    /// file locks go with its process, and what it committed is in the file (or its WAL).
    Sqlite {
        /// The database file, unique to one harness run.
        path: String,
    },
}

/// Server session ids of one worker: MySQL connection ids or Redis client ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sessions(pub Vec<i64>);

impl std::fmt::Display for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<String> = self.0.iter().map(i64::to_string).collect();
        f.write_str(&ids.join(","))
    }
}

impl FromStr for Sessions {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.split(',').filter(|p| !p.is_empty()).map(str::parse).collect::<Result<_, _>>().map(Sessions)
    }
}

impl Backend {
    /// MySQL at `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/`), database [`MYSQL_DATABASE`].
    pub fn mysql_from_env() -> Self {
        let url =
            std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".into());
        Self::MySql { url, database: MYSQL_DATABASE.to_owned() }
    }

    /// Redis at `REDIS_URL` (default `redis://127.0.0.1:6379/`), keys under a prefix unique to
    /// this process.
    pub fn redis_from_env() -> Self {
        let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
        let prefix =
            format!("crash-test:{}:{}", std::process::id(), mnemograph_core::checkpoint::backend::uuid6(0));
        Self::Redis { url, prefix }
    }

    /// A SQLite file of its own in the system's temporary directory.
    pub fn sqlite_in_temp_dir() -> Self {
        let name = format!(
            "crash-test-{}-{}.sqlite",
            std::process::id(),
            mnemograph_core::checkpoint::backend::uuid6(0)
        );
        Self::Sqlite { path: std::env::temp_dir().join(name).to_string_lossy().into_owned() }
    }

    /// `mysql`, `redis` or `sqlite`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::MySql { .. } => "mysql",
            Self::Redis { .. } => "redis",
            Self::Sqlite { .. } => "sqlite",
        }
    }

    fn url(&self) -> &str {
        match self {
            Self::MySql { url, .. } | Self::Redis { url, .. } => url,
            Self::Sqlite { path } => path,
        }
    }

    /// The worker arguments that name this backend.
    pub(crate) fn args(&self) -> Vec<String> {
        match self {
            Self::MySql { url, database } => {
                vec!["backend=mysql".into(), format!("url={url}"), format!("database={database}")]
            }
            Self::Redis { url, prefix } => {
                vec!["backend=redis".into(), format!("url={url}"), format!("prefix={prefix}")]
            }
            Self::Sqlite { path } => vec!["backend=sqlite".into(), format!("path={path}")],
        }
    }

    /// The backend named by worker arguments (see [`args`](Self::args)).
    pub(crate) fn from_args(get: impl Fn(&'static str) -> Result<String>) -> Result<Self> {
        match get("backend")?.as_str() {
            "mysql" => Ok(Self::MySql { url: get("url")?, database: get("database")? }),
            "redis" => Ok(Self::Redis { url: get("url")?, prefix: get("prefix")? }),
            "sqlite" => Ok(Self::Sqlite { path: get("path")? }),
            _ => Err(Error::Argument { name: "backend", problem: "must be `mysql`, `redis` or `sqlite`" }),
        }
    }

    fn mysql_options(url: &str, database: &str) -> Result<MySqlConnectOptions> {
        Ok(MySqlConnectOptions::from_str(url)?.database(database))
    }

    fn unreachable(&self, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::Unreachable { backend: self.name(), url: self.url().to_owned(), source: source.into() }
    }

    /// The worker's saver, and the server sessions it will use.
    ///
    /// # Errors
    /// Connection failures.
    pub async fn connect_worker(&self) -> Result<(Arc<dyn DynCheckpointer>, Sessions)> {
        match self {
            Self::MySql { url, database } => {
                let n = WORKER_MYSQL_CONNECTIONS as u32;
                // A fixed set of connections that never expire, so the ids announced stay the
                // only sessions this worker ever has.
                let pool = MySqlPoolOptions::new()
                    .min_connections(n)
                    .max_connections(n)
                    .idle_timeout(None)
                    .max_lifetime(None);
                let saver =
                    MySqlCheckpointer::connect_with(Self::mysql_options(url, database)?, pool).await?;
                let mut held = Vec::new();
                let mut ids = Vec::new();
                for _ in 0..WORKER_MYSQL_CONNECTIONS {
                    let mut conn = saver.pool().acquire().await?;
                    let id: u64 = sqlx::query_scalar("SELECT CONNECTION_ID()").fetch_one(&mut *conn).await?;
                    ids.push(id as i64);
                    // Held until all are open, so each query ran on a distinct connection.
                    held.push(conn);
                }
                drop(held);
                Ok((Arc::new(saver), Sessions(ids)))
            }
            Self::Redis { url, prefix } => {
                let config = RedisCheckpointer::builder().connection_manager_config();
                let mut manager =
                    redis::Client::open(url.as_str())?.get_connection_manager_with_config(config).await?;
                let id: i64 = redis::cmd("CLIENT").arg("ID").query_async(&mut manager).await?;
                let saver = RedisCheckpointer::builder()
                    .key_prefix(prefix.clone())
                    .ttl(REDIS_TTL)
                    .with_connection_manager(manager)?;
                Ok((Arc::new(saver), Sessions(vec![id])))
            }
            Self::Sqlite { path } => {
                Ok((Arc::new(SqliteCheckpointer::connect(path).await?), Sessions::default()))
            }
        }
    }

    /// The harness's saver (the database created and migrated first, for MySQL).
    ///
    /// # Errors
    /// [`Error::Unreachable`] when the server does not answer; other failures as they come.
    pub async fn connect_harness(&self) -> Result<Harness> {
        match self {
            Self::MySql { url, database } => {
                let server = Self::mysql_options(url, "information_schema")?;
                let mut admin =
                    match tokio::time::timeout(CONNECT_TIMEOUT, MySqlConnection::connect_with(&server)).await
                    {
                        Ok(Ok(conn)) => conn,
                        Ok(Err(e)) => return Err(self.unreachable(e)),
                        Err(_) => return Err(self.unreachable("no answer within 5 s")),
                    };
                let create = format!("CREATE DATABASE IF NOT EXISTS `{database}` CHARACTER SET utf8mb4");
                sqlx::raw_sql(&create).execute(&mut admin).await?;
                admin.close().await?;
                let pool = MySqlPoolOptions::new().max_connections(2);
                let saver =
                    MySqlCheckpointer::connect_with(Self::mysql_options(url, database)?, pool).await?;
                saver.setup().await?;
                let probe = Probe::MySql(saver.pool().clone());
                Ok(Harness { saver: Arc::new(saver), probe })
            }
            Self::Redis { url, prefix } => {
                let client = redis::Client::open(url.as_str())?;
                let manager =
                    match tokio::time::timeout(CONNECT_TIMEOUT, client.get_connection_manager()).await {
                        Ok(Ok(m)) => m,
                        Ok(Err(e)) => return Err(self.unreachable(e)),
                        Err(_) => return Err(self.unreachable("no answer within 5 s")),
                    };
                let saver = RedisCheckpointer::builder()
                    .key_prefix(prefix.clone())
                    .ttl(REDIS_TTL)
                    .with_connection_manager(manager.clone())?;
                Ok(Harness { saver: Arc::new(saver), probe: Probe::Redis(manager) })
            }
            Self::Sqlite { path } => {
                let saver = SqliteCheckpointer::connect(path).await?;
                Ok(Harness { saver: Arc::new(saver), probe: Probe::Sqlite(path.clone()) })
            }
        }
    }
}

/// How the harness asks the server which sessions are open.
#[derive(Clone)]
enum Probe {
    /// `information_schema.PROCESSLIST`.
    MySql(sqlx::MySqlPool),
    /// `CLIENT LIST ID ...`.
    Redis(ConnectionManager),
    /// No sessions to ask about; the file at this path is checked instead.
    Sqlite(String),
}

impl std::fmt::Debug for Probe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::MySql(_) => "Probe::MySql",
            Self::Redis(_) => "Probe::Redis",
            Self::Sqlite(_) => "Probe::Sqlite",
        })
    }
}

/// The harness's view of a backend: a saver to inspect threads with, and a session probe.
pub struct Harness {
    /// The saver under test, as the harness reads it.
    pub saver: Arc<dyn DynCheckpointer>,
    /// Asks the server about sessions.
    probe: Probe,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness").field("probe", &self.probe).finish_non_exhaustive()
    }
}

impl Harness {
    /// For SQLite, that the file a killed worker left opens on a fresh connection and passes
    /// `PRAGMA integrity_check`; for the servers, nothing.
    ///
    /// # Errors
    /// [`Error::Integrity`] when the check reports damage; [`Error::Sql`] when the file does not
    /// open.
    pub async fn check_file(&self) -> Result<()> {
        let Probe::Sqlite(path) = &self.probe else { return Ok(()) };
        let mut conn = SqliteConnection::connect_with(&connect_options(path)?).await?;
        let report: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut conn).await?;
        conn.close().await?;
        match report.as_str() {
            "ok" => Ok(()),
            _ => Err(Error::Integrity { path: path.into(), report }),
        }
    }

    /// Waits until the server has closed every session in `sessions`.
    ///
    /// # Errors
    /// [`Error::SessionsLinger`] after `timeout`; probe failures.
    pub async fn wait_closed(&self, sessions: &Sessions, timeout: Duration) -> Result<()> {
        if sessions.0.is_empty() {
            return Ok(());
        }
        let started = Instant::now();
        loop {
            let open = match &self.probe {
                Probe::MySql(pool) => {
                    // The ids are integers parsed from the worker's line, so inlining them is safe.
                    let list = sessions.to_string();
                    let sql =
                        format!("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID IN ({list})");
                    sqlx::query_scalar::<_, i64>(&sql).fetch_one(pool).await? > 0
                }
                Probe::Redis(manager) => {
                    let mut cmd = redis::cmd("CLIENT");
                    cmd.arg("LIST").arg("ID");
                    for id in &sessions.0 {
                        cmd.arg(*id);
                    }
                    let listed: String = cmd.query_async(&mut manager.clone()).await?;
                    !listed.trim().is_empty()
                }
                // A SQLite worker announces no sessions; its process is gone once reaped.
                Probe::Sqlite(_) => false,
            };
            if !open {
                return Ok(());
            }
            if started.elapsed() > timeout {
                return Err(Error::SessionsLinger {
                    sessions: sessions.to_string(),
                    seconds: timeout.as_secs(),
                });
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}
