//! The Python SDK flows (`sdk_flows.py`, `surface_flows.py`) against a cluster of two servers on
//! one MySQL database and one Redis: the client talks to a server that runs no runs, so every run
//! is queued, run by the other server, and streamed back through Redis.

mod support;

use std::sync::Arc;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::store::InMemoryStore;
use mnemograph_server_cluster::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_flows_pass_against_a_cluster_of_two_servers() {
    flows_on_two_servers("sdk_flows.py", "cluster_sdk").await;
}

/// The rest of the client's surface on the same pair: delayed runs wait in the shared queue, runs
/// are cancelled and threads pruned through a process that runs none of them, and a thread's
/// stream follows runs the other process runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_of_the_sdk_surface_passes_against_a_cluster_of_two_servers() {
    flows_on_two_servers("surface_flows.py", "cluster_surface").await;
}

/// Runs the flows of `script` against a front server with no workers and a back server with 8,
/// on a fresh database named after `label`.
async fn flows_on_two_servers(script: &'static str, label: &str) {
    let Some(python) = support::python::python() else { return };
    let Some(pair) = support::pair::Pair::start(label).await else { return };
    let url = pair.url.clone();
    let flows = tokio::task::spawn_blocking(move || support::python::run_script(&python, script, &url)).await;
    if let Err(e) = flows {
        std::panic::resume_unwind(e.into_panic());
    }
    pair.stop().await;
}

/// Thread search on a cluster reads status, ids and the page in the database and filters
/// metadata after: the answers are those of one process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thread_search_on_a_cluster_filters_orders_and_pages() {
    let Some(redis) = support::mysql::redis_url().await else { return };
    let Some(db) = support::mysql::fresh_database("cluster_search").await else { return };
    let saver = MySqlCheckpointer::connect(&db).await.expect("connect the saver");
    saver.setup().await.expect("saver tables");
    let cluster = Cluster::connect(&db, &redis)
        .await
        .expect("cluster")
        .with_workers(0)
        .with_key_prefix(format!("{db}:"));
    let server =
        support::graphs::server_on(Arc::new(saver), Arc::new(InMemoryStore::new())).with_backend(cluster);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let serving = tokio::spawn(server.serve(listener));
    let http = support::http_client();
    let mut ids = Vec::new();
    for i in 0..5 {
        let body =
            serde_json::json!({ "metadata": { "team": if i % 2 == 0 { "red" } else { "blue" }, "n": i } });
        let t: serde_json::Value =
            http.post(format!("{url}/threads")).json(&body).send().await.unwrap().json().await.unwrap();
        ids.push(t["thread_id"].as_str().unwrap().to_owned());
    }
    let search = |body: serde_json::Value| {
        let (http, url) = (http.clone(), url.clone());
        async move {
            let found: Vec<serde_json::Value> = http
                .post(format!("{url}/threads/search"))
                .json(&body)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            found.iter().map(|t| t["metadata"]["n"].as_i64().unwrap()).collect::<Vec<_>>()
        }
    };
    assert_eq!(search(serde_json::json!({ "limit": 2 })).await, [4, 3], "newest first, one page");
    assert_eq!(search(serde_json::json!({ "limit": 2, "offset": 2 })).await, [2, 1]);
    assert_eq!(search(serde_json::json!({ "metadata": { "team": "red" } })).await, [4, 2, 0]);
    assert_eq!(
        search(serde_json::json!({ "metadata": { "team": "red" }, "limit": 1, "offset": 1 })).await,
        [2]
    );
    assert_eq!(search(serde_json::json!({ "status": "idle", "ids": [ids[1], ids[3]] })).await, [3, 1]);
    assert_eq!(search(serde_json::json!({ "status": "busy" })).await, Vec::<i64>::new());
    assert_eq!(search(serde_json::json!({ "ids": [] })).await, Vec::<i64>::new());
    serving.abort();
    support::mysql::drop_database(&db).await;
}

/// On a cluster the queue cap counts the thread's runs waiting in the database: with no worker
/// to start them, the first run waits to start and one more may wait behind it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_thread_queue_on_a_cluster_refuses_with_429_and_queues_nothing() {
    let Some(redis) = support::mysql::redis_url().await else { return };
    let Some(db) = support::mysql::fresh_database("cluster_queue_cap").await else { return };
    let saver = MySqlCheckpointer::connect(&db).await.expect("connect the saver");
    saver.setup().await.expect("saver tables");
    let cluster = Cluster::connect(&db, &redis)
        .await
        .expect("cluster")
        .with_workers(0)
        .with_key_prefix(format!("{db}:"));
    let limits = mnemograph_server::Limits::default().max_queue_per_thread(1);
    let server = support::graphs::server_on(Arc::new(saver), Arc::new(InMemoryStore::new()))
        .with_backend(cluster)
        .with_limits(limits);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let serving = tokio::spawn(server.serve(listener));
    let http = support::http_client();
    let thread: serde_json::Value = http
        .post(format!("{url}/threads"))
        .json(&serde_json::json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let thread = thread["thread_id"].as_str().unwrap().to_owned();
    let run = serde_json::json!({ "assistant_id": "chain", "input": { "log": [] } });
    let create = || http.post(format!("{url}/threads/{thread}/runs")).json(&run).send();
    assert_eq!(create().await.unwrap().status(), reqwest::StatusCode::OK, "the thread's next run");
    assert_eq!(create().await.unwrap().status(), reqwest::StatusCode::OK, "waits behind it");
    let refused = create().await.unwrap();
    assert_eq!(refused.status(), reqwest::StatusCode::TOO_MANY_REQUESTS);
    let detail: serde_json::Value = refused.json().await.unwrap();
    assert!(detail["detail"].as_str().is_some_and(|d| d.contains("wait")), "{detail}");
    let runs: Vec<serde_json::Value> =
        http.get(format!("{url}/threads/{thread}/runs")).send().await.unwrap().json().await.unwrap();
    assert_eq!(runs.len(), 2, "nothing queued: {runs:?}");
    serving.abort();
    support::mysql::drop_database(&db).await;
}
