//! Shared by the live-server tests: where the server is, fresh databases, and skipping.
//!
//! The server is `DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/graph_test`). When
//! it cannot be reached a test prints why and passes, unless `CI` is set: then the test fails, so
//! a CI run never goes green without having talked to the server; under `CI` the variable itself
//! must be set (`scripts/test.sh` sets it), so that a run never tests a server it was not given.
//! The tests of pgvector's mode run on a second server, `PGVECTOR_URL`, under the same rules.

#![allow(dead_code, unreachable_pub)]

use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version};
use mnemograph_checkpoint::checkpoint::{ChannelVersions, Checkpoint};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_postgres::{PgConnectOptions, PgPoolOptions, PostgresCheckpointer};
use sqlx::{Connection, PgConnection};

/// Used when `DATABASE_URL` is not set.
pub const DEFAULT_URL: &str = "postgres://postgres@127.0.0.1:5432/graph_test";

thread_local! {
    /// The server this thread's test runs on, when not `DATABASE_URL`'s (see [`on_pgvector`]).
    /// A `#[tokio::test]` runs on one thread, so everything the test calls sees it.
    static SERVER: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Points this thread's test at the PostgreSQL with pgvector of `PGVECTOR_URL`
/// (`bash scripts/pgvector.sh` starts one and prints its URL; `scripts/test.sh` sets it). When it
/// is not set: a panic under CI, otherwise a printed skip and `None`.
pub fn on_pgvector(test: &str) -> Option<()> {
    let Some(url) = std::env::var("PGVECTOR_URL").ok().filter(|u| !u.is_empty()) else {
        assert!(
            !ci(),
            "{test}: PGVECTOR_URL is required when CI is set (bash scripts/pgvector.sh prints one)"
        );
        eprintln!("SKIPPED: {test}: PGVECTOR_URL is not set (bash scripts/pgvector.sh prints one)");
        return None;
    };
    SERVER.with(|server| *server.borrow_mut() = Some(url));
    Some(())
}

/// The server URL under test.
pub fn url() -> String {
    if let Some(url) = SERVER.with(|server| server.borrow().clone()) {
        return url;
    }
    match std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()) {
        Some(url) => url,
        None => {
            assert!(!ci(), "DATABASE_URL is required when CI is set (scripts/test.sh sets it)");
            DEFAULT_URL.to_owned()
        }
    }
}

fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Reports an unreachable server: a panic under CI, otherwise a printed skip and `None`.
pub fn unavailable<T>(reason: &str) -> Option<T> {
    assert!(!ci(), "PostgreSQL at {} is required when CI is set: {reason}", url());
    eprintln!("SKIPPED: PostgreSQL at {} unreachable ({reason}); set DATABASE_URL to run this test", url());
    None
}

/// The Python interpreter of `LANGGRAPH_PYTHON`, with `langgraph-checkpoint-postgres` installed
/// (`scripts/python-peer.sh` prints one). When it is not set: a panic under CI, otherwise a
/// printed skip and `None`.
pub fn python_peer(test: &str) -> Option<String> {
    if let Some(python) = std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty()) {
        return Some(python);
    }
    assert!(
        !ci(),
        "{test}: LANGGRAPH_PYTHON is required when CI is set (bash scripts/python-peer.sh prints one)"
    );
    eprintln!("SKIPPED: {test}: LANGGRAPH_PYTHON is not set (bash scripts/python-peer.sh prints one)");
    None
}

/// Connection options for database `name` on the server of [`url`].
pub fn options(name: &str) -> PgConnectOptions {
    PgConnectOptions::from_str(&url()).expect("DATABASE_URL is not a valid URL").database(name)
}

/// The database named in [`url`] (`graph_test` when the URL has none).
pub fn default_database() -> String {
    let options = PgConnectOptions::from_str(&url()).expect("DATABASE_URL is not a valid URL");
    options.get_database().unwrap_or("graph_test").to_owned()
}

/// [`url`] naming database `name` instead.
pub fn url_for(name: &str) -> String {
    let base = url();
    let (base, query) = base.split_once('?').map_or((base.as_str(), None), |(b, q)| (b, Some(q)));
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[after_scheme..].find('/').map_or(base.len(), |i| after_scheme + i);
    let query = query.map(|q| format!("?{q}")).unwrap_or_default();
    format!("{}/{name}{query}", &base[..host_end])
}

/// A connection to the server's `postgres` database, for creating and dropping others.
async fn admin() -> Option<PgConnection> {
    let options = options("postgres");
    match tokio::time::timeout(Duration::from_secs(5), PgConnection::connect_with(&options)).await {
        Ok(Ok(conn)) => Some(conn),
        Ok(Err(e)) => unavailable(&e.to_string()),
        Err(_) => unavailable("no answer within 5 s"),
    }
}

/// Creates database `name` when missing; `None` when the server is unreachable.
pub async fn create_database(name: &str) -> Option<()> {
    let mut conn = admin().await?;
    let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
        .bind(name)
        .fetch_one(&mut conn)
        .await
        .expect("pg_database");
    if !exists {
        let created = sqlx::raw_sql(&format!("CREATE DATABASE \"{name}\"")).execute(&mut conn).await;
        // Another test binary may have created it meanwhile.
        if let Err(e) = created {
            let raced =
                e.as_database_error().and_then(|d| d.code()).is_some_and(|c| c == "42P04" || c == "23505");
            assert!(raced, "CREATE DATABASE {name}: {e}");
        }
    }
    conn.close().await.ok();
    Some(())
}

/// A saver on database `name`, created when missing, without running `setup`.
pub async fn saver_on(name: &str) -> Option<PostgresCheckpointer> {
    create_database(name).await?;
    let pool = PgPoolOptions::new().max_connections(4).acquire_timeout(Duration::from_secs(30));
    Some(PostgresCheckpointer::connect_with(options(name), pool).await.expect("connect"))
}

/// A saver on the shared test database, migrated. Tests sharing it use unique thread ids.
pub async fn saver() -> Option<PostgresCheckpointer> {
    let saver = saver_on(&default_database()).await?;
    saver.setup().await.expect("setup");
    Some(saver)
}

/// A fresh, empty database for one test; drop it with [`drop_database`].
pub async fn fresh_database(label: &str) -> Option<(String, PostgresCheckpointer)> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let name = format!(
        "{}_{label}_{}_{}",
        default_database(),
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    drop_database(&name).await;
    let saver = saver_on(&name).await?;
    Some((name, saver))
}

/// Drops database `name` if it exists (best effort).
pub async fn drop_database(name: &str) {
    if let Ok(mut conn) = PgConnection::connect_with(&options("postgres")).await {
        sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
            .execute(&mut conn)
            .await
            .ok();
        conn.close().await.ok();
    }
}

/// A thread id no other test or run uses.
pub fn unique(label: &str) -> String {
    format!("{label}-{}", mnemograph_checkpoint::checkpoint::backend::uuid6(0))
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

/// Runs `tests/python/peer.py` with LangGraph's PostgresSaver on database `db`; its JSON output.
/// `None` when there is no Python peer (see [`python_peer`]).
pub fn python(test: &str, db: &str, args: &[&str]) -> Option<serde_json::Value> {
    python_script(test, "peer.py", db, args)
}

/// Runs `tests/python/{script}` on database `db`; its JSON output. `None` when there is no
/// Python peer (see [`python_peer`]).
pub fn python_script(test: &str, script: &str, db: &str, args: &[&str]) -> Option<serde_json::Value> {
    let python = python_peer(test)?;
    let script = format!("{}/tests/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(url_for(db))
        .args(args)
        .output()
        .expect("run the Python peer");
    assert!(out.status.success(), "{script} {args:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("the Python peer prints JSON"))
}

/// A store on a fresh, empty database of its own, sharing the saver's pool; drop the database
/// with [`drop_database`].
pub async fn fresh_store(label: &str) -> Option<(String, mnemograph_checkpoint_postgres::PostgresStore)> {
    let (name, saver) = fresh_database(label).await?;
    let store = mnemograph_checkpoint_postgres::PostgresStore::builder()
        .from_pool(saver.pool().clone())
        .await
        .expect("store");
    Some((name, store))
}
