//! A cluster's durable queue and the run options that act on it: a delayed run (`after_seconds`)
//! waits in the shared queue, dated at its start, and holds up no run queued after it on its
//! thread; `POST /runs/cancel` through a process that runs nothing ends the pending runs of every
//! thread at once and stops the running ones the other process runs.
//!
//! Needs `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_test`) and `REDIS_URL` (default
//! `redis://127.0.0.1:6379/`); without them the tests print why and pass, unless `CI` is set.

mod support;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::store::InMemoryStore;
use mnemograph_server_cluster::Cluster;
use serde_json::{json, Value};
use sqlx::Row;
use support::mysql::{drop_database, fresh_database, redis_url};

/// A front process with no workers and a back process with `workers`, on `db`; the front's URL.
async fn two_servers(db: &str, redis: &str, workers: usize) -> String {
    let saver = MySqlCheckpointer::connect(db).await.expect("saver");
    saver.setup().await.expect("saver tables");
    let saver: Arc<MySqlCheckpointer> = Arc::new(saver);
    let store = Arc::new(InMemoryStore::new());
    let mut url = String::new();
    for workers in [0, workers] {
        let cluster = Cluster::connect(db, redis)
            .await
            .expect("cluster")
            .with_workers(workers)
            .with_key_prefix(format!("{db}:"));
        let server = support::graphs::server_on(saver.clone(), store.clone()).with_backend(cluster);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        if workers == 0 {
            url = format!("http://{}", listener.local_addr().unwrap());
        }
        tokio::spawn(server.serve(listener));
    }
    url
}

async fn send(request: reqwest::RequestBuilder) -> (reqwest::StatusCode, Value) {
    let response = request.send().await.unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn post(url: &str, body: Value) -> Value {
    let (status, value) = send(support::http_client().post(url).json(&body)).await;
    assert!(status.is_success(), "{url}: {status} {value}");
    value
}

async fn get(url: &str) -> Value {
    let (status, value) = send(support::http_client().get(url)).await;
    assert!(status.is_success(), "{url}: {status} {value}");
    value
}

async fn thread(url: &str) -> String {
    post(&format!("{url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned()
}

/// Waits (up to a minute) until `check` holds.
async fn eventually<F: Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not after a minute");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delayed_run_waits_in_the_queue_and_lets_a_later_run_on_its_thread_go_first() {
    let Some(redis) = redis_url().await else { return };
    let Some(db) = fresh_database("cluster_delayed").await else { return };
    let url = two_servers(&db, &redis, 2).await;
    let tid = thread(&url).await;
    let start = Instant::now();
    let body = json!({"assistant_id": "chain", "input": {"log": ["late"]}, "after_seconds": 3});
    let delayed = post(&format!("{url}/threads/{tid}/runs"), body).await;
    let delayed_id = delayed["run_id"].as_str().unwrap().to_owned();
    assert_eq!(delayed["status"], "pending");
    // The queue's row is dated at the run's start, as LangGraph dates it.
    let mut conn = <sqlx::MySqlConnection as sqlx::Connection>::connect(&db).await.unwrap();
    let ahead: i64 = sqlx::query(
        "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), created_at) AS ahead FROM server_runs WHERE run_id = ?",
    )
    .bind(&delayed_id)
    .fetch_one(&mut conn)
    .await
    .unwrap()
    .get("ahead");
    assert!(ahead > 2_000_000, "the delayed run is dated {ahead} µs ahead");

    let body = json!({"assistant_id": "chain", "input": {"log": ["now"]}, "multitask_strategy": "enqueue"});
    let quick = post(&format!("{url}/threads/{tid}/runs"), body).await;
    let quick_id = quick["run_id"].as_str().unwrap();
    let out = get(&format!("{url}/threads/{tid}/runs/{quick_id}/join")).await;
    assert_eq!(out["log"], json!(["now", "a", "b"]));
    assert!(start.elapsed() < Duration::from_secs(3), "the later run did not wait for the delayed one");
    assert_eq!(get(&format!("{url}/threads/{tid}/runs/{delayed_id}")).await["status"], "pending");
    assert_eq!(get(&format!("{url}/threads/{tid}")).await["status"], "busy");

    let out = get(&format!("{url}/threads/{tid}/runs/{delayed_id}/join")).await;
    assert!(start.elapsed() >= Duration::from_secs(3), "the delayed run started early");
    assert_eq!(out["log"], json!(["now", "a", "b", "late", "a", "b"]));
    assert_eq!(get(&format!("{url}/threads/{tid}")).await["status"], "idle");
    drop_database(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_many_by_status_ends_pending_runs_everywhere_and_stops_running_ones() {
    let Some(redis) = redis_url().await else { return };
    let Some(db) = fresh_database("cluster_cancel_many").await else { return };
    let url = two_servers(&db, &redis, 4).await;
    let (busy, waiting) = (thread(&url).await, thread(&url).await);
    let sleepy = json!({"assistant_id": "sleepy", "input": {"log": []}});
    let running = post(&format!("{url}/threads/{busy}/runs"), sleepy).await;
    let running_id = running["run_id"].as_str().unwrap().to_owned();
    let queued = json!({"assistant_id": "chain", "input": {"log": []}, "multitask_strategy": "enqueue"});
    let queued = post(&format!("{url}/threads/{busy}/runs"), queued).await;
    let delayed = json!({"assistant_id": "chain", "input": {"log": []}, "after_seconds": 60});
    let delayed = post(&format!("{url}/threads/{waiting}/runs"), delayed).await;
    let running_url = format!("{url}/threads/{busy}/runs/{running_id}");
    eventually("the back process runs the run", || async { get(&running_url).await["status"] == "running" })
        .await;

    // `status` refuses thread and run ids beside it, as LangGraph does.
    let both = json!({"status": "all", "thread_id": busy, "run_ids": [running_id]});
    let (status, body) = send(support::http_client().post(format!("{url}/runs/cancel")).json(&both)).await;
    assert_eq!(status, reqwest::StatusCode::UNPROCESSABLE_ENTITY, "{body}");

    let (status, body) =
        send(support::http_client().post(format!("{url}/runs/cancel")).json(&json!({"status": "all"}))).await;
    assert_eq!(status, reqwest::StatusCode::NO_CONTENT, "{body}");
    for (tid, run) in [(&busy, &queued), (&waiting, &delayed)] {
        let run_id = run["run_id"].as_str().unwrap();
        let status = get(&format!("{url}/threads/{tid}/runs/{run_id}")).await["status"].clone();
        assert_eq!(status, "interrupted", "a pending run ends at once");
    }
    eventually("the running run stops", || async { get(&running_url).await["status"] == "interrupted" })
        .await;
    assert_eq!(get(&format!("{url}/threads/{waiting}")).await["status"], "idle");
    eventually("the busy thread is freed", || async {
        get(&format!("{url}/threads/{busy}")).await["status"] != "busy"
    })
    .await;
    // Nothing is left to cancel.
    let (status, _) =
        send(support::http_client().post(format!("{url}/runs/cancel")).json(&json!({"status": "all"}))).await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);
    drop_database(&db).await;
}
