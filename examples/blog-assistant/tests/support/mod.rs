//! Shared by the service tests: the app on an ephemeral port over real Redis and MariaDB, an
//! SSE client, and skipping when the servers are absent.
//!
//! Isolation: the app uses its own MySQL database (`blog_assistant_test`) and a Redis database
//! index of its own (derived from `REDIS_URL`), so a test may `FLUSHDB` it; every test uses
//! fresh user and session ids. Without a server a test prints `SKIPPED` and passes, unless `CI`
//! is set: then it fails.

#![allow(dead_code, unreachable_pub, reason = "each test file uses a different subset")]

pub mod commit_fault;
pub mod langgraph;

use std::sync::Arc;
use std::time::Duration;

use blog_assistant::{App, Config, Server};
use serde_json::Value;
use tokio::time::timeout;

/// The MySQL database the tests' app archives into.
pub const TEST_DATABASE: &str = "blog_assistant_test";
/// The Redis database index of the tests that never flush.
pub const SHARED_DB: u8 = 13;
/// The Redis database index of the test that flushes (only it uses this index).
pub const FLUSHED_DB: u8 = 14;
/// Longest wait for one whole chat round.
pub const ROUND_TIMEOUT: Duration = Duration::from_secs(30);

/// `url` with its path (what follows `scheme://authority`) replaced by `path`; the query is
/// kept.
fn with_path(url: &str, path: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[authority_start..].find('/').map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{path}", &base[..path_start]);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// `REDIS_URL` (default local) pointed at database `db`.
pub fn redis_url(db: u8) -> String {
    let base = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned());
    with_path(&base, &db.to_string())
}

/// `MYSQL_URL` (default local) pointed at [`TEST_DATABASE`].
pub fn mysql_url() -> String {
    mysql_url_of(TEST_DATABASE)
}

/// `MYSQL_URL` (default local) pointed at `database`.
pub fn mysql_url_of(database: &str) -> String {
    let base =
        std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".to_owned());
    with_path(&base, database)
}

/// Drops `database` so that the app creates it anew: for a test that changes its tables (a
/// trigger refusing writes), on a database no other test uses. `None` (after printing why) when
/// MariaDB is missing outside CI.
pub async fn fresh_database(database: &str) -> Option<String> {
    use sqlx::Connection as _;
    let connect = sqlx::MySqlConnection::connect(&mysql_url_of("information_schema"));
    let mut conn = match timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            return unavailable(&format!("MariaDB is unreachable ({e}); start it or set MYSQL_URL"))
        }
        Err(_) => return unavailable("MariaDB did not answer within 5 s"),
    };
    sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS `{database}`")).execute(&mut conn).await.expect("drop");
    Some(mysql_url_of(database))
}

/// Reports a missing server: a panic under CI, otherwise a printed skip and `None`.
pub fn unavailable<T>(reason: &str) -> Option<T> {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{reason} (CI is set, so this fails)");
    }
    // Straight to stderr: the harness captures `eprintln!`, and a skip must be seen.
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}");
    None
}

/// The app and its server.
#[derive(Debug)]
pub struct TestApp {
    /// The app (agent, archive).
    pub app: App,
    /// Serving it on 127.0.0.1.
    pub server: Server,
    /// The Redis database it checkpoints to.
    pub redis_url: String,
}

/// The app over Redis database `redis_db` and the test MySQL database, served on a free port;
/// `None` (after printing why) when a server is missing outside CI.
pub async fn start(redis_db: u8) -> Option<TestApp> {
    start_with(redis_db, blog_assistant::config::DEFAULT_TOKEN_DELAY).await
}

/// As [`start`], with the offline model streaming one token per `token_delay` (zero for tests
/// that run many rounds).
pub async fn start_with(redis_db: u8, token_delay: Duration) -> Option<TestApp> {
    let model = blog_assistant::model::OfflineModel::new(token_delay);
    start_custom(redis_db, &mysql_url(), mnemograph_models::ChatModelExt::shared(model)).await
}

/// The app over Redis database `redis_db` and the MySQL database of `mysql_url`, answering with
/// `model`, served on a free port; `None` (after printing why) when a server is missing outside
/// CI.
pub async fn start_custom(
    redis_db: u8,
    mysql_url: &str,
    model: mnemograph_models::SharedChatModel,
) -> Option<TestApp> {
    let redis_url = redis_url(redis_db);
    if let Err(e) = ping_redis(&redis_url).await {
        return unavailable(&format!(
            "Redis at {redis_url} is unreachable ({e}); start redis-server or set REDIS_URL"
        ));
    }
    let config = Config::offline(redis_url.as_str(), mysql_url);
    let app = match timeout(Duration::from_secs(15), App::connect_with_model(&config, model)).await {
        Ok(Ok(app)) => app,
        Ok(Err(e)) => {
            let reason = format!("the app could not start ({}); start MariaDB or set MYSQL_URL", e.chain());
            return unavailable(&reason);
        }
        Err(_) => return unavailable("the app did not connect within 15 s"),
    };
    let server = Server::spawn(&app, "127.0.0.1:0").await.expect("bind an ephemeral port");
    Some(TestApp { app, server, redis_url })
}

async fn ping_redis(url: &str) -> Result<(), String> {
    let ping = async {
        let mut conn = redis::Client::open(url)?.get_multiplexed_async_connection().await?;
        redis::cmd("PING").query_async::<String>(&mut conn).await
    };
    match timeout(Duration::from_secs(2), ping).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer within 2 s".to_owned()),
    }
}

/// A user id and a session id no other test or run uses.
pub fn ids(label: &str) -> (String, String) {
    let n = uuid::Uuid::new_v4().simple().to_string();
    (format!("u-{label}-{}", &n[..12]), format!("s-{}", &n[12..24]))
}

/// An SSE event: name and JSON data.
pub type SseEvent = (String, Value);

/// Reads SSE events off a streaming response.
#[derive(Debug)]
pub struct EventReader {
    /// The response being read.
    response: reqwest::Response,
    /// Text received but not yet split into events.
    buf: String,
}

impl EventReader {
    /// The next event, `None` at the end of the body. Comment frames (keep-alives) are skipped.
    pub async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                let mut name = "message".to_owned();
                let mut data = Vec::new();
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        name = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                let value = serde_json::from_str(&data.join("\n")).expect("event data is JSON");
                return Some((name, value));
            }
            let chunk = self.response.chunk().await.expect("read the SSE body")?;
            self.buf.push_str(std::str::from_utf8(&chunk).expect("UTF-8 body"));
        }
    }
}

/// A client for the loopback services, which speak plain HTTP. The workspace's reqwest has rustls
/// without a crypto provider (mnemograph-models' `openai` names ring for its own client), so a client
/// built with defaults has no provider and panics: this one is handed a rustls config on ring.
pub fn http_client() -> reqwest::Client {
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    reqwest::Client::builder().tls_backend_preconfigured(tls).build().expect("HTTP client")
}

/// Posts a question; the response must be an SSE stream.
pub async fn open_chat(base: &str, user: &str, session: &str, message: &str) -> EventReader {
    let body = serde_json::json!({ "user_id": user, "session_id": session, "message": message });
    let response = timeout(
        Duration::from_secs(10),
        http_client().post(format!("{base}/chat/stream")).json(&body).send(),
    )
    .await
    .expect("the service answers within 10 s")
    .expect("POST /chat/stream");
    assert_eq!(response.status(), 200, "POST /chat/stream status");
    let kind = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default();
    assert!(kind.starts_with("text/event-stream"), "content-type {kind}");
    EventReader { response, buf: String::new() }
}

/// One whole round: every event until the end of the stream.
pub async fn chat(base: &str, user: &str, session: &str, message: &str) -> Vec<SseEvent> {
    let mut reader = open_chat(base, user, session, message).await;
    let all = async {
        let mut events = Vec::new();
        while let Some(e) = reader.next().await {
            events.push(e);
        }
        events
    };
    timeout(ROUND_TIMEOUT, all).await.expect("the round ends within 30 s")
}

/// The `done` event's answer; panics (showing the events) when the round did not complete.
pub fn answer(events: &[SseEvent]) -> String {
    let done =
        events.iter().find(|(n, _)| n == "done").unwrap_or_else(|| panic!("no done event: {events:?}"));
    done.1["answer"].as_str().expect("answer is text").to_owned()
}

/// `(role, content, citations JSON)` of every archived row of a session, oldest first, read
/// straight from the table.
pub async fn archived_rows(app: &App, user: &str, session: &str) -> Vec<(String, String, Option<String>)> {
    use sqlx::Row as _;
    let rows = sqlx::query(
        "SELECT role, content, CAST(citations AS CHAR) AS citations FROM chat_messages \
         WHERE user_id = ? AND session_id = ? ORDER BY id",
    )
    .bind(user)
    .bind(session)
    .fetch_all(app.archive().pool())
    .await
    .expect("read chat_messages");
    rows.iter()
        .map(|r| {
            (
                r.get::<String, _>("role"),
                r.get::<String, _>("content"),
                r.get::<Option<String>, _>("citations"),
            )
        })
        .collect()
}

/// Deletes every archive row of `user`'s `session` (`thread`): what a process that dies after
/// the snapshot's commit and before the archive's leaves, for a thread of one round.
pub async fn lose_the_archive(pool: &sqlx::MySqlPool, user: &str, session: &str, thread: &str) {
    let mut tx = pool.begin().await.unwrap();
    for (table, column) in [("tool_invocations", "thread_id"), ("archived_rounds", "thread_id")] {
        sqlx::query(&format!("DELETE FROM {table} WHERE {column} = ?"))
            .bind(thread)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    sqlx::query("DELETE FROM chat_messages WHERE user_id = ? AND session_id = ?")
        .bind(user)
        .bind(session)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
}

/// Bytes Redis uses for a thread: `MEMORY USAGE <key> SAMPLES 0` summed over every key of the
/// thread (missing keys count 0).
pub async fn thread_bytes(t: &TestApp, thread: &str) -> u64 {
    let keys = mnemograph_checkpoint_redis::ThreadKeys::new(&t.app_prefix(), thread);
    let mut conn =
        redis::Client::open(t.redis_url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let mut total = 0;
    for key in keys.all() {
        let used: Option<u64> = redis::cmd("MEMORY")
            .arg("USAGE")
            .arg(key)
            .arg("SAMPLES")
            .arg(0)
            .query_async(&mut conn)
            .await
            .expect("MEMORY USAGE");
        total += used.unwrap_or(0);
    }
    total
}

impl TestApp {
    /// The key prefix of the app's checkpoints.
    pub fn app_prefix(&self) -> String {
        Config::offline("", "").redis_prefix
    }
}

#[cfg(test)]
mod tests {
    use super::with_path;

    #[test]
    fn paths_are_replaced_and_queries_kept() {
        assert_eq!(with_path("redis://127.0.0.1:6379/", "13"), "redis://127.0.0.1:6379/13");
        assert_eq!(with_path("redis://h:1", "13"), "redis://h:1/13");
        assert_eq!(
            with_path("mysql://root@h:3306/graph_test?ssl-mode=disabled", "x"),
            "mysql://root@h:3306/x?ssl-mode=disabled"
        );
    }
}
