//! Webhooks on a cluster of three processes: each run's final record is posted once, by the
//! process that ended the run, whichever process took the request — after a receiver's failed
//! first attempt too, and for a run cancelled from another process.
//!
//! Needs `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_test`) and `REDIS_URL` (default
//! `redis://127.0.0.1:6379/`); without them the test prints why and passes, unless `CI` is set.

mod support;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::store::{DynStore, InMemoryStore};
use mnemograph_server::WebhookPolicy;
use mnemograph_server_cluster::Cluster;
use serde_json::{json, Value};
use support::receiver::{Answer, Receiver};

async fn post(url: &str, body: Value) -> Value {
    let response = support::http_client().post(url).json(&body).send().await.unwrap();
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{url}: {status} {body}");
    body
}

async fn get(url: &str) -> Value {
    support::http_client().get(url).send().await.unwrap().json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_run_of_a_cluster_posts_its_final_record_once() {
    let Some(redis) = support::mysql::redis_url().await else { return };
    let Some(db) = support::mysql::fresh_database("cluster_webhooks").await else { return };
    let saver = MySqlCheckpointer::connect(&db).await.expect("connect the saver");
    saver.setup().await.expect("saver tables");
    let saver: Arc<dyn DynCheckpointer> = Arc::new(saver);
    let store: Arc<dyn DynStore> = Arc::new(InMemoryStore::new());
    // The first attempt anywhere is refused with 503: a retry must not become a second delivery.
    let hooks = Receiver::start(vec![Answer::Status(503)]).await;
    let policy = WebhookPolicy::new().allow_host(hooks.host()).backoff(Duration::from_millis(50));
    let mut urls = Vec::new();
    for workers in [0, 2, 2] {
        let cluster = Cluster::connect(&db, &redis)
            .await
            .expect("cluster")
            .with_workers(workers)
            .with_key_prefix(format!("{db}:"));
        let server = support::graphs::server_on(saver.clone(), store.clone())
            .with_webhooks(policy.clone())
            .expect("a valid policy")
            .with_backend(cluster);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!("http://{}", listener.local_addr().unwrap()));
        tokio::spawn(server.serve(listener));
    }

    // Runs on threads and stateless ones, asked of every process, waited on or joined.
    let mut expected: HashMap<String, &str> = HashMap::new();
    for i in 0..12 {
        let url = &urls[i % urls.len()];
        let graph = if i % 4 == 3 { "failing" } else { "chain" };
        let body = json!({"assistant_id": graph, "input": {"log": []}, "webhook": hooks.url});
        let (run_id, thread_id) = if i % 2 == 0 {
            let tid =
                post(&format!("{url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned();
            let run = post(&format!("{url}/threads/{tid}/runs"), body).await;
            (run["run_id"].as_str().unwrap().to_owned(), Some(tid))
        } else {
            let run = post(&format!("{url}/runs"), body).await;
            (run["run_id"].as_str().unwrap().to_owned(), None)
        };
        if let Some(tid) = thread_id {
            get(&format!("{url}/threads/{tid}/runs/{run_id}/join")).await;
        }
        expected.insert(run_id, if graph == "failing" { "error" } else { "success" });
    }
    // A run cancelled through a process that runs nothing, while another process runs it.
    let tid =
        post(&format!("{}/threads", urls[0]), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    let body = json!({"assistant_id": "sleepy", "input": {"log": []}, "webhook": hooks.url});
    let run = post(&format!("{}/threads/{tid}/runs", urls[1]), body).await;
    let run_id = run["run_id"].as_str().unwrap().to_owned();
    for _ in 0..100 {
        if get(&format!("{}/threads/{tid}/runs/{run_id}", urls[0])).await["status"] == "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    post(&format!("{}/threads/{tid}/runs/{run_id}/cancel", urls[0]), json!({})).await;
    expected.insert(run_id, "interrupted");

    let delivered = hooks.wait_delivered(expected.len()).await;
    // Time for a wrong second delivery from another process to arrive.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let delivered_after = hooks.delivered();
    assert_eq!(delivered_after.len(), expected.len(), "one delivery per run: {delivered_after:?}");
    let mut seen: HashMap<String, String> = HashMap::new();
    for record in &delivered {
        let run_id = record["run_id"].as_str().unwrap().to_owned();
        let status = record["status"].as_str().unwrap().to_owned();
        assert!(seen.insert(run_id.clone(), status).is_none(), "{run_id} delivered twice");
    }
    for (run_id, status) in &expected {
        assert_eq!(seen.get(run_id).map(String::as_str), Some(*status), "run {run_id}");
    }
    assert_eq!(hooks.requests().len(), expected.len() + 1, "one retried attempt, nothing more");
    support::mysql::drop_database(&db).await;
}
