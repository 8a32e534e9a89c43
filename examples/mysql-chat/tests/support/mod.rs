//! Shared by the live tests: the service on an ephemeral port over the real MariaDB/MySQL, an
//! HTTP client, and legacy rows.
//!
//! The server is the one in `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_test`); the
//! tests use their own database on it, `mysql_chat_test`, and fresh UUID conversation ids, so
//! tests running at once never see each other's rows. When the server cannot be reached a test
//! prints `SKIPPED: …` and passes, unless `CI` is set: then it fails.

#![allow(dead_code, unreachable_pub)]

pub mod turns;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlConnectOptions, MySqlPool, MySqlPoolOptions};
use mnemograph_models::{ChatModelExt, SharedChatModel};
use mysql_chat::{ChatService, Config, OfflineModel};
use serde_json::Value;
use sqlx::{Connection, MySqlConnection};

/// The database the tests use.
pub const DATABASE: &str = "mysql_chat_test";

/// The server URL under test.
pub fn url() -> String {
    std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".to_owned())
}

/// Reports an unreachable server: a panic under CI, otherwise a printed skip and `None`.
pub fn unavailable<T>(reason: &str) -> Option<T> {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("MySQL at {} is required when CI is set: {reason}", url());
    }
    eprintln!("SKIPPED: MySQL at {} unreachable ({reason}); set MYSQL_URL to run this test", url());
    None
}

/// Connection options for `database` on the server of [`url`].
pub fn options(database: &str) -> MySqlConnectOptions {
    MySqlConnectOptions::from_str(&url()).expect("MYSQL_URL is not a valid URL").database(database)
}

/// A pool for conversation locks, apart from the working pool as the service keeps it: rounds
/// waiting in `GET_LOCK` hold their connections, and must not take the ones the holder needs.
pub async fn lock_pool() -> MySqlPool {
    lock_pool_on(DATABASE).await
}

/// Like [`lock_pool`], on `database`.
pub async fn lock_pool_on(database: &str) -> MySqlPool {
    MySqlPoolOptions::new().max_connections(16).connect_with(options(database)).await.expect("lock pool")
}

/// The service running on 127.0.0.1 at an ephemeral port.
pub struct App {
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// The service behind it (for reading checkpoints).
    pub service: ChatService,
    /// A pool on the test database.
    pub pool: MySqlPool,
    /// The HTTP client.
    pub http: reqwest::Client,
}

/// Starts the service with the offline model on [`DATABASE`] (created and set up when needed);
/// `None` when the server is unreachable.
pub async fn start() -> Option<App> {
    start_on(DATABASE).await
}

/// Drops `database` if it exists (best effort).
pub async fn drop_database(database: &str) {
    if let Ok(mut conn) = MySqlConnection::connect_with(&options("information_schema")).await {
        sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS `{database}`")).execute(&mut conn).await.ok();
        conn.close().await.ok();
    }
}

/// The service's settings in the tests: the defaults, with the lock wait the tests expect.
pub fn config() -> Config {
    let mut config = Config::new(url(), "127.0.0.1:0".parse().expect("address"));
    config.lock_wait = Duration::from_secs(30);
    config
}

/// Like [`start`], on `database`.
pub async fn start_on(database: &str) -> Option<App> {
    start_with(database, OfflineModel.shared(), &config()).await
}

/// Like [`start`], on `database`, with `model` and the settings of `config` (see
/// [`ChatService::new`]).
pub async fn start_with(database: &str, model: SharedChatModel, config: &Config) -> Option<App> {
    // `information_schema` always exists, so this connects before the test database does.
    let server = options("information_schema");
    let connect = MySqlConnection::connect_with(&server);
    let mut conn = match tokio::time::timeout(Duration::from_secs(5), connect).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => return unavailable(&e.to_string()),
        Err(_) => return unavailable("no answer within 5 s"),
    };
    let create = format!("CREATE DATABASE IF NOT EXISTS `{database}` CHARACTER SET utf8mb4");
    sqlx::raw_sql(&create).execute(&mut conn).await.expect("CREATE DATABASE");
    conn.close().await.ok();

    let pool_options = || MySqlPoolOptions::new().max_connections(8).acquire_timeout(Duration::from_secs(30));
    let saver = MySqlCheckpointer::connect_with(options(database), pool_options()).await.expect("connect");
    // Both are safe to race: tests of one binary start at the same time.
    saver.setup().await.expect("checkpoint setup");
    mysql_chat::legacy::setup(saver.pool()).await.expect("legacy setup");
    let locks = lock_pool_on(database).await;
    let service = ChatService::new(saver.clone(), locks, model, config).expect("service");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("local addr"));
    // The server lives as long as the test's runtime.
    tokio::spawn(mysql_chat::serve(listener, service.clone(), std::future::pending()));
    // reqwest has rustls without a crypto provider (mnemograph-models' `openai` names ring for its own
    // client), so even a plain-HTTP client needs a rustls config, here on ring.
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(rustls::RootCertStore::empty())
        .with_no_client_auth();
    let http = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .timeout(Duration::from_secs(60))
        .build()
        .expect("client");
    Some(App { base, service, pool: saver.pool().clone(), http })
}

impl App {
    /// POSTs `body` as JSON to `path`; the status and the JSON answer.
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {text}")))
    }

    /// GETs `path`; the status and the JSON answer.
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self.http.get(format!("{}{path}", self.base)).send().await.expect("request");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {text}")))
    }

    /// One round through `POST /api/chat`; the answer JSON (status 200 asserted).
    pub async fn chat(&self, conversation_id: &str, message: &str) -> Value {
        let body = serde_json::json!({ "conversation_id": conversation_id, "message": message });
        let (status, answer) = self.post("/api/chat", &body).await;
        assert_eq!(status, 200, "{answer}");
        answer
    }

    /// One round through `POST /api/chat/stream`: the SSE events as `(event, data)`, in order.
    pub async fn chat_stream(&self, conversation_id: &str, message: &str) -> Vec<(String, Value)> {
        let body = serde_json::json!({ "conversation_id": conversation_id, "message": message });
        let mut response = self
            .http
            .post(format!("{}/api/chat/stream", self.base))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("request");
        assert_eq!(response.status().as_u16(), 200);
        let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok());
        assert_eq!(content_type, Some("text/event-stream"));
        let mut raw = Vec::new();
        while let Some(chunk) = response.chunk().await.expect("stream") {
            raw.extend_from_slice(&chunk);
        }
        parse_sse(&String::from_utf8(raw).expect("UTF-8 stream"))
    }
}

/// Parses an SSE body into `(event, data as JSON)`, skipping keep-alive comments.
pub fn parse_sse(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter_map(|block| {
            let mut event = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = Some(v.trim().to_owned());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            let event = event?;
            let data =
                serde_json::from_str(&data).unwrap_or_else(|e| panic!("SSE data not JSON ({e}): {data}"));
            Some((event, data))
        })
        .collect()
}

/// A conversation id no other test or run uses.
pub fn new_conversation_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Writes a conversation as the old application did: only in `conversations` / `messages`.
pub async fn insert_legacy(pool: &MySqlPool, conversation_id: &str, messages: &[(&str, &str)]) {
    sqlx::query("INSERT INTO conversations (id, title) VALUES (?, 'legacy')")
        .bind(conversation_id)
        .execute(pool)
        .await
        .expect("insert conversation");
    for (role, content) in messages {
        sqlx::query("INSERT INTO messages (conversation_id, role, content) VALUES (?, ?, ?)")
            .bind(conversation_id)
            .bind(role)
            .bind(content)
            .execute(pool)
            .await
            .expect("insert message");
    }
}
