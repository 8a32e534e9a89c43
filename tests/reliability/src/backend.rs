//! The savers under test, their servers, and the admin side that kills their connections.
//!
//! Every live test works in a space of its own, so tests (and other suites) can share one server:
//! a fresh MariaDB database dropped at the end, or a fresh Redis key prefix whose threads are
//! deleted at the end. Server faults are made by killing *this saver's* connections only
//! (`KILL CONNECTION` of the sessions on its database, `CLIENT KILL ID` of its Redis client):
//! the shared servers keep running for everyone else.

use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlConnectOptions, MySqlPoolOptions};
use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_core::checkpoint::backend::uuid6;
use mnemograph_core::checkpoint::{DynCheckpointer, InMemoryCheckpointer};
use redis::aio::{ConnectionManager, MultiplexedConnection};
use sqlx::{Connection, MySqlConnection};

/// `MYSQL_URL` when unset.
pub const DEFAULT_MYSQL_URL: &str = "mysql://root@127.0.0.1:3306/graph_test";
/// `REDIS_URL` when unset.
pub const DEFAULT_REDIS_URL: &str = "redis://127.0.0.1:6379/";

/// How long to wait for a server to answer before calling it unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `CI` is set: an unreachable server then fails the test instead of skipping it.
pub fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Reports an unreachable server: a panic under `CI`, otherwise a `SKIPPED` line and `None`.
///
/// # Panics
/// When `CI` is set.
pub fn unavailable<T>(what: &str, why: &str) -> Option<T> {
    assert!(!ci(), "{what} is required when CI is set: {why}");
    eprintln!("SKIPPED: {what} unreachable ({why}); start it or set its URL to run this test");
    None
}

/// The server side of a live saver.
enum Server {
    /// In process: nothing to reach or clean.
    Memory,
    /// A database of its own on MariaDB/MySQL.
    MySql {
        /// The database, dropped by [`Backend::cleanup`].
        database: String,
        /// A connection outside the saver's pool, for `KILL` and `DROP DATABASE`.
        admin: MySqlConnection,
    },
    /// A key prefix of its own on Redis.
    Redis {
        /// A handle on the saver's own multiplexed connection, to ask for its client id.
        saver_conn: ConnectionManager,
        /// A separate connection, for `CLIENT KILL`.
        admin: MultiplexedConnection,
    },
}

/// A saver under test and the means to clean up after it and to break its connections.
pub struct Backend {
    /// `memory`, `mysql` or `redis`, for reports.
    pub name: &'static str,
    /// The saver, shared by every graph and worker of the test.
    pub saver: Arc<dyn DynCheckpointer>,
    /// Its server.
    server: Server,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend").field("name", &self.name).finish()
    }
}

/// The in-memory saver.
pub fn memory() -> Backend {
    Backend { name: "memory", saver: Arc::new(InMemoryCheckpointer::new()), server: Server::Memory }
}

/// The MySQL saver on a fresh database `reliability_<label>_<pid>_<n>` of the `MYSQL_URL` server,
/// migrated, with a pool of at most `pool_size` connections; `None` when the server is
/// unreachable (and `CI` is not set).
///
/// # Panics
/// On a malformed `MYSQL_URL`, or when the server refuses to create the database.
pub async fn mysql(label: &str, pool_size: u32) -> Option<Backend> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let url = std::env::var("MYSQL_URL").unwrap_or_else(|_| DEFAULT_MYSQL_URL.to_owned());
    let options = MySqlConnectOptions::from_str(&url).expect("MYSQL_URL is not a valid URL");
    let database =
        format!("reliability_{label}_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    // `information_schema` always exists, so the admin connection works before the database does.
    let server = options.clone().database("information_schema");
    let connect = MySqlConnection::connect_with(&server);
    let mut admin = match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return unavailable("MySQL", &e.to_string()),
        Err(_) => return unavailable("MySQL", "no answer within 5 s"),
    };
    let create = format!("CREATE DATABASE `{database}` CHARACTER SET utf8mb4");
    sqlx::raw_sql(&create).execute(&mut admin).await.expect("CREATE DATABASE");
    let pool = MySqlPoolOptions::new().max_connections(pool_size).acquire_timeout(Duration::from_secs(20));
    let saver = MySqlCheckpointer::connect_with(options.database(&database), pool).await.expect("connect");
    saver.setup().await.expect("setup");
    Some(Backend { name: "mysql", saver: Arc::new(saver), server: Server::MySql { database, admin } })
}

/// The Redis saver under a fresh key prefix on the `REDIS_URL` server, threads expiring after an
/// hour (a test that dies before its cleanup leaves nothing for long); `None` when the server is
/// unreachable (and `CI` is not set).
///
/// # Panics
/// On a malformed `REDIS_URL`.
pub async fn redis(label: &str) -> Option<Backend> {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| DEFAULT_REDIS_URL.to_owned());
    let client = redis::Client::open(url.as_str()).expect("REDIS_URL is not a valid URL");
    let connect = async {
        Ok::<_, redis::RedisError>((
            client
                .get_connection_manager_with_config(RedisCheckpointer::builder().connection_manager_config())
                .await?,
            client.get_multiplexed_async_connection().await?,
        ))
    };
    let (manager, admin) = match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(Ok(conns)) => conns,
        Ok(Err(e)) => return unavailable("Redis", &e.to_string()),
        Err(_) => return unavailable("Redis", "no answer within 5 s"),
    };
    let prefix = format!("reliability:{label}:{}", uuid6(0));
    let builder = RedisCheckpointer::builder().key_prefix(prefix).ttl(Duration::from_secs(3600));
    let saver = builder.with_connection_manager(manager.clone()).expect("valid settings");
    Some(Backend {
        name: "redis",
        saver: Arc::new(saver),
        server: Server::Redis { saver_conn: manager, admin },
    })
}

impl Backend {
    /// Kills every server connection of the saver, from a connection of its own; returns how
    /// many were killed (0 for the in-memory saver).
    ///
    /// # Panics
    /// When the admin connection fails.
    pub async fn kill_connections(&mut self) -> usize {
        match &mut self.server {
            Server::Memory => 0,
            Server::MySql { database, admin } => {
                // Every session on the test's database is the saver's pool: the admin connection
                // sits on `information_schema`.
                let ids: Vec<i64> = sqlx::query_scalar(
                    "SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()",
                )
                .bind(&*database)
                .fetch_all(&mut *admin)
                .await
                .expect("list the saver's sessions");
                for id in &ids {
                    // The session may have ended on its own meanwhile (error 1094): ignore that.
                    sqlx::raw_sql(&format!("KILL CONNECTION {id}")).execute(&mut *admin).await.ok();
                }
                ids.len()
            }
            Server::Redis { saver_conn, admin } => {
                // The saver multiplexes one connection; ask it for its id (this reconnects it
                // first if an earlier kill left it down).
                let Ok(id) = redis::cmd("CLIENT").arg("ID").query_async::<i64>(saver_conn).await else {
                    return 0;
                };
                let killed: i64 = redis::cmd("CLIENT")
                    .arg("KILL")
                    .arg("ID")
                    .arg(id)
                    .query_async(admin)
                    .await
                    .expect("CLIENT KILL");
                usize::try_from(killed).unwrap_or(0)
            }
        }
    }

    /// Removes what the test stored: drops the MySQL database, deletes `threads` from Redis.
    pub async fn cleanup(self, threads: &[String]) {
        match self.server {
            Server::Memory => {}
            Server::MySql { database, mut admin } => {
                sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS `{database}`"))
                    .execute(&mut admin)
                    .await
                    .ok();
                admin.close().await.ok();
            }
            Server::Redis { .. } => {
                for thread in threads {
                    self.saver.delete_thread(thread).await.ok();
                }
            }
        }
    }
}
