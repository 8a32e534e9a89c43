//! Fresh MySQL/MariaDB databases for the queue and cluster tests, on the server `MYSQL_URL`
//! names, and the Redis server of `REDIS_URL`.

use std::time::Duration;

use sqlx::Connection;

/// The server part of `MYSQL_URL` (default `mysql://root@127.0.0.1:3306`), without a database.
fn server() -> String {
    let base =
        std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".to_owned());
    base.rsplit_once('/')
        .filter(|(s, _)| s.contains("://") && !s.ends_with('/'))
        .map_or(base.clone(), |(s, _)| s.to_owned())
}

/// The URL of a new, empty database named after `label`; `None` (after saying why) when the
/// server is unreachable and `CI` is not set.
pub(crate) async fn fresh_database(label: &str) -> Option<String> {
    let server = server();
    let connect = sqlx::MySqlConnection::connect(&format!("{server}/information_schema"));
    let mut conn = match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(c)) => c,
        other => {
            let why = format!("MySQL at {server} is unreachable: {:?}", other.map(|r| r.err()));
            assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "{why} (CI is set, so this fails)");
            eprintln!("SKIPPED: {why}");
            return None;
        }
    };
    let name = format!("server_{label}_{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    sqlx::raw_sql(&format!("CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
        .execute(&mut conn)
        .await
        .expect("CREATE DATABASE");
    Some(format!("{server}/{name}"))
}

/// Drops the database of `url` (one [`fresh_database`] made), at the end of a test that passed.
pub(crate) async fn drop_database(url: &str) {
    let (server, name) = url.rsplit_once('/').expect("a database URL");
    let mut conn =
        sqlx::MySqlConnection::connect(&format!("{server}/information_schema")).await.expect("connect");
    sqlx::raw_sql(&format!("DROP DATABASE `{name}`")).execute(&mut conn).await.expect("DROP DATABASE");
}

/// `REDIS_URL` (default `redis://127.0.0.1:6379/`) when a Redis server answers there; `None`
/// (after saying why) when none does and `CI` is not set.
pub(crate) async fn redis_url() -> Option<String> {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned());
    let addr = url.trim_start_matches("redis://").trim_end_matches('/').to_owned();
    let addr = addr.rsplit_once('@').map_or(addr.clone(), |(_, a)| a.to_owned());
    let reached = tokio::time::timeout(Duration::from_secs(3), tokio::net::TcpStream::connect(&addr)).await;
    if matches!(reached, Ok(Ok(_))) {
        return Some(url);
    }
    let why = format!("Redis at {url} is unreachable");
    assert!(std::env::var_os("CI").is_none_or(|v| v.is_empty()), "{why} (CI is set, so this fails)");
    eprintln!("SKIPPED: {why}");
    None
}
