//! The server on the durable savers: SQLite (saver and store in one file) and Postgres (saver and
//! store in one database). What the graphs checkpoint and what clients put in the store outlive
//! the process that served them.

mod support;

use std::path::PathBuf;

use mnemograph_checkpoint_postgres::{PostgresCheckpointer, PostgresStore};
use mnemograph_checkpoint_sqlite::{SqliteCheckpointer, SqliteStore};
use mnemograph_core::checkpoint::{CheckpointConfig, Checkpointer};
use mnemograph_core::store::{namespace, Store};
use mnemograph_server::Server;
use serde_json::{json, Value};
use support::graphs::chain;

async fn serve(server: Server) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        server.serve(listener).await.unwrap();
    });
    (url, task)
}

async fn call(method: reqwest::Method, url: String, body: Option<Value>) -> Value {
    let mut request = support::http_client().request(method, url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let value = response.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{status}: {value}");
    value
}

/// Runs `chain` on a new thread and returns the thread's id, after checking its state.
async fn run_chain(url: &str) -> String {
    let thread = call(reqwest::Method::POST, format!("{url}/threads"), Some(json!({}))).await;
    let tid = thread["thread_id"].as_str().unwrap().to_owned();
    let body = json!({"assistant_id": "chain", "input": {"log": []}});
    let done = call(reqwest::Method::POST, format!("{url}/threads/{tid}/runs/wait"), Some(body)).await;
    assert_eq!(done["log"], json!(["a", "b"]));
    tid
}

fn file(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("server-durable");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}-{}.sqlite", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_server_keeps_checkpoints_and_store_items_across_a_restart() {
    let path = file("one-file");
    let target = path.to_str().unwrap().to_owned();
    let start = || async {
        let saver = SqliteCheckpointer::connect(&target).await.unwrap();
        // The store shares the saver's pool: one file, one set of connections.
        let store = SqliteStore::builder().from_pool(saver.pool().clone()).await.unwrap();
        let server = Server::new(saver).with_store(store).graph("chain", chain().compile().unwrap()).unwrap();
        serve(server).await
    };
    let (url, task) = start().await;
    let tid = run_chain(&url).await;
    let item = json!({"namespace": ["notes", "ada"], "key": "dog", "value": {"name": "Biscuit"}});
    call(reqwest::Method::PUT, format!("{url}/store/items"), Some(item)).await;
    task.abort();
    let _ = task.await;

    // A new process on the same file: the store answers over HTTP, and the thread's checkpoint
    // is in the file.
    let (url, _task) = start().await;
    let got =
        call(reqwest::Method::GET, format!("{url}/store/items?namespace=notes.ada&key=dog"), None).await;
    assert_eq!(got["value"], json!({"name": "Biscuit"}));
    let found = call(
        reqwest::Method::POST,
        format!("{url}/store/items/search"),
        Some(json!({"namespace_prefix": ["notes"]})),
    )
    .await;
    assert_eq!(found["items"][0]["key"], "dog", "{found}");
    let saver = SqliteCheckpointer::connect(&target).await.unwrap();
    let latest =
        saver.get_tuple(&CheckpointConfig::thread(&tid)).await.unwrap().expect("the run's checkpoint");
    assert_eq!(latest.checkpoint.channel_values["log"].decode::<Vec<String>>().unwrap(), ["a", "b"]);
    let store = SqliteStore::connect(&target).await.unwrap();
    assert!(store.get(&namespace(["notes", "ada"]), "dog").await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_server_keeps_checkpoints_and_store_items_across_a_restart() {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    let url = std::env::var("DATABASE_URL")
        .ok()
        .filter(|u| u.starts_with("postgres"))
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/graph_test".to_owned());
    if let Err(e) = PostgresCheckpointer::connect(&url).await {
        if !ci {
            return eprintln!("SKIPPED: no Postgres at {url}: {e}");
        }
        panic!("Postgres at {url} is required under CI: {e}");
    }
    // Each start is a new pool, as a new process would have; the store shares the saver's.
    let start = || async {
        let saver = PostgresCheckpointer::connect(&url).await.unwrap();
        saver.setup().await.unwrap();
        let store = PostgresStore::builder().from_pool(saver.pool().clone()).await.unwrap();
        let server = Server::new(saver).with_store(store).graph("chain", chain().compile().unwrap()).unwrap();
        serve(server).await
    };
    let (http, task) = start().await;
    let tid = run_chain(&http).await;
    // The thread's id keeps this run's items apart from other runs' on the shared database.
    let item = json!({"namespace": ["notes", tid], "key": "dog", "value": {"name": "Biscuit"}});
    call(reqwest::Method::PUT, format!("{http}/store/items"), Some(item)).await;
    task.abort();
    let _ = task.await;

    let (http, task) = start().await;
    let got =
        call(reqwest::Method::GET, format!("{http}/store/items?namespace=notes.{tid}&key=dog"), None).await;
    assert_eq!(got["value"], json!({"name": "Biscuit"}));
    let found = call(
        reqwest::Method::POST,
        format!("{http}/store/items/search"),
        Some(json!({"namespace_prefix": ["notes", tid]})),
    )
    .await;
    assert_eq!(found["items"][0]["key"], "dog", "{found}");
    task.abort();
    let saver = PostgresCheckpointer::connect(&url).await.unwrap();
    let latest =
        saver.get_tuple(&CheckpointConfig::thread(&tid)).await.unwrap().expect("the run's checkpoint");
    assert_eq!(latest.checkpoint.channel_values["log"].decode::<Vec<String>>().unwrap(), ["a", "b"]);
    saver.delete_thread(&tid).await.unwrap();
    let store = PostgresStore::connect(&url).await.unwrap();
    store.delete(&namespace(["notes", &tid]), "dog").await.unwrap();
}
