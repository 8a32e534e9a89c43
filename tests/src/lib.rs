//! End-to-end scenarios that span crates; the tests live in `tests/`.
//!
//! `tests/savers.rs` runs the engine's persistence behaviours — interrupts and resume, pending
//! writes after a failure, time travel, subgraphs, durability modes, a multi-turn conversation —
//! against every saver: in memory, MySQL/MariaDB (`MYSQL_URL`), Redis (`REDIS_URL`), PostgreSQL
//! (`DATABASE_URL`) and SQLite (a file of the test process).
//!
//! This library holds what those tests share about where the servers are.

/// Whether the run is under CI, where a missing server or peer fails a test instead of skipping it.
pub fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// The MySQL/MariaDB URL of the tests (`MYSQL_URL`, by default the loopback server's `graph_test`).
pub fn mysql_url() -> String {
    std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".into())
}

/// `mysql://user@host:port` of [`mysql_url`], without database or options, for tests that make
/// databases of their own.
pub fn mysql_server() -> String {
    let url = mysql_url();
    let base = url.split('?').next().unwrap_or(&url).to_owned();
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    match base[after_scheme..].find('/') {
        Some(slash) => base[..after_scheme + slash].to_owned(),
        None => base,
    }
}

/// The PostgreSQL URL of the tests (`DATABASE_URL`, by default the loopback server's
/// `graph_test`).
pub fn postgres_url() -> String {
    std::env::var("DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/graph_test".into())
}

/// `postgres://user@host:port` of [`postgres_url`], without database or options, for tests that
/// make databases of their own.
pub fn postgres_server() -> String {
    server_of(&postgres_url())
}

/// `scheme://user@host:port` of a database URL.
fn server_of(url: &str) -> String {
    let base = url.split('?').next().unwrap_or(url).to_owned();
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    match base[after_scheme..].find('/') {
        Some(slash) => base[..after_scheme + slash].to_owned(),
        None => base,
    }
}

/// Says why a test cannot run and lets it pass; under [`ci`] it fails instead.
///
/// # Panics
/// When `CI` is set.
pub fn skip(what: &str, why: &str) {
    assert!(!ci(), "{what} is required when CI is set: {why}");
    eprintln!("SKIPPED: {what} unavailable ({why})");
}
