//! Shared by the live-server tests: where the server is, fresh databases, and skipping.
//!
//! The server is `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_test`). When it cannot
//! be reached a test prints why and passes, unless `CI` is set: then the test fails, so a CI run
//! never goes green without having talked to the server.

#![allow(dead_code, unreachable_pub)]

use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version};
use mnemograph_checkpoint::checkpoint::{ChannelVersions, Checkpoint};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlConnectOptions, MySqlPoolOptions};
use sqlx::{Connection, MySqlConnection};

/// Used when `MYSQL_URL` is not set.
pub const DEFAULT_URL: &str = "mysql://root@127.0.0.1:3306/graph_test";

/// The server URL under test.
pub fn url() -> String {
    std::env::var("MYSQL_URL").unwrap_or_else(|_| DEFAULT_URL.to_owned())
}

/// Reports an unreachable server: a panic under CI, otherwise a printed skip and `None`.
pub fn unavailable<T>(reason: &str) -> Option<T> {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    if ci {
        panic!("MySQL at {} is required when CI is set: {reason}", url());
    }
    eprintln!("SKIPPED: MySQL at {} unreachable ({reason}); start it or point MYSQL_URL at a server to run this test", url());
    None
}

/// The Python interpreter of `LANGGRAPH_PYTHON`, with `langgraph-checkpoint-mysql` installed
/// (`scripts/python-peer.sh` prints one), for the tests against LangGraph's own saver. When it is
/// not set: a panic under CI, which must not go green without the peer; otherwise a printed skip
/// and `None`.
pub fn python_peer(test: &str) -> Option<String> {
    if let Some(python) = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty()) {
        return Some(python);
    }
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    assert!(
        !ci,
        "{test}: LANGGRAPH_PYTHON is required when CI is set (bash scripts/python-peer.sh prints one)"
    );
    eprintln!(
        "SKIPPED: {test}: LANGGRAPH_PYTHON is not set; point it at a Python with langgraph-checkpoint-mysql \
         (bash scripts/python-peer.sh prints one) to run it"
    );
    None
}

/// Connection options for database `name` on the server of [`url`].
pub fn options(name: &str) -> MySqlConnectOptions {
    MySqlConnectOptions::from_str(&url()).expect("MYSQL_URL is not a valid URL").database(name)
}

/// The database named in [`url`] (`graph_test` when the URL has none).
pub fn default_database() -> String {
    let options = MySqlConnectOptions::from_str(&url()).expect("MYSQL_URL is not a valid URL");
    options.get_database().unwrap_or("graph_test").to_owned()
}

/// Creates database `name` (utf8mb4, with `collation` or the server's default) when missing;
/// `None` when the server is unreachable.
pub async fn create_database(name: &str, collation: Option<&str>) -> Option<()> {
    // `information_schema` always exists, so this connects even before `name` does.
    let server = options("information_schema");
    let connect = MySqlConnection::connect_with(&server);
    let mut conn = match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return unavailable(&e.to_string()),
        Err(_) => return unavailable("no answer within 5 s"),
    };
    let collate = collation.map(|c| format!(" COLLATE {c}")).unwrap_or_default();
    let create = format!("CREATE DATABASE IF NOT EXISTS `{name}` CHARACTER SET utf8mb4{collate}");
    sqlx::raw_sql(&create).execute(&mut conn).await.expect("CREATE DATABASE failed");
    conn.close().await.ok();
    Some(())
}

/// A saver on database `name`, created when missing, without running `setup`.
pub async fn saver_on(name: &str) -> Option<MySqlCheckpointer> {
    // Not the server's default collation (`utf8mb4_general_ci` on MariaDB, `utf8mb4_0900_ai_ci` on
    // MySQL): LangGraph's own queries fail on such a database, this crate's must not.
    create_database(name, Some("utf8mb4_unicode_ci")).await?;
    let pool = MySqlPoolOptions::new().max_connections(4).acquire_timeout(Duration::from_secs(30));
    Some(MySqlCheckpointer::connect_with(options(name), pool).await.expect("connect"))
}

/// A saver on the shared test database, migrated. Tests sharing it use unique thread ids.
pub async fn saver() -> Option<MySqlCheckpointer> {
    let saver = saver_on(&default_database()).await?;
    saver.setup().await.expect("setup");
    Some(saver)
}

/// A fresh, empty database for one test; drop it with [`drop_database`].
pub async fn fresh_database(label: &str) -> Option<(String, MySqlCheckpointer)> {
    let name = fresh_name(label);
    drop_database(&name).await;
    let saver = saver_on(&name).await?;
    Some((name, saver))
}

/// Like [`fresh_database`], with the server's default collation, which LangGraph's Python saver
/// needs.
pub async fn fresh_default_database(label: &str) -> Option<(String, MySqlCheckpointer)> {
    let name = fresh_name(label);
    drop_database(&name).await;
    create_database(&name, None).await?;
    let saver = saver_on(&name).await?;
    Some((name, saver))
}

fn fresh_name(label: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{}_{label}_{}_{}", default_database(), std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Drops database `name` if it exists (best effort).
pub async fn drop_database(name: &str) {
    if let Ok(mut conn) = MySqlConnection::connect_with(&options("information_schema")).await {
        sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS `{name}`")).execute(&mut conn).await.ok();
        conn.close().await.ok();
    }
}

/// A thread id no other test or run uses.
pub fn unique(label: &str) -> String {
    format!("{label}-{}", mnemograph_checkpoint::checkpoint::backend::uuid6(0))
}

/// [`url`] naming database `name` instead, with the URL parameters `params` (`k=v&...`) added.
pub fn url_for(name: &str, params: &str) -> String {
    let base = url();
    let (base, query) = base.split_once('?').unwrap_or((&base, ""));
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[after_scheme..].find('/').map_or(base.len(), |i| after_scheme + i);
    let query = [query, params].iter().filter(|q| !q.is_empty()).copied().collect::<Vec<_>>().join("&");
    format!("{}/{name}{}{query}", &base[..host_end], if query.is_empty() { "" } else { "?" })
}

/// The ids of the server sessions connected to database `name`, seen from an admin session.
pub async fn sessions_on(name: &str) -> Vec<i64> {
    let mut admin =
        MySqlConnection::connect_with(&options("information_schema")).await.expect("admin connection");
    let ids = sqlx::query_scalar("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? ORDER BY ID")
        .bind(name)
        .fetch_all(&mut admin)
        .await
        .expect("PROCESSLIST");
    admin.close().await.ok();
    ids
}

/// A checkpoint at `step` whose `values` all get a new version; returns it with `new_versions`.
pub fn checkpoint(step: i64, values: &[(&str, ChannelValue)]) -> (Checkpoint, ChannelVersions) {
    let mut cp = Checkpoint {
        v: 4,
        id: checkpoint_id(step),
        ts: mnemograph_checkpoint::checkpoint::backend::now_iso(),
        ..Checkpoint::default()
    };
    for (channel, value) in values {
        let version = next_version(Some(&step.max(0).to_string()));
        cp.channel_values.insert((*channel).into(), value.clone());
        cp.channel_versions.insert((*channel).into(), version.into());
    }
    let new_versions = cp.channel_versions.clone();
    (cp, new_versions)
}
