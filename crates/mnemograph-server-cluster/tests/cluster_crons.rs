//! Crons on a cluster of three processes: every process's scheduler looks for due crons, and
//! each tick runs exactly once whichever processes see it; a tick missed while no process looked
//! runs once, then the cron keeps its schedule from then on, as LangGraph's scheduler does.
//!
//! Needs `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_test`) and `REDIS_URL` (default
//! `redis://127.0.0.1:6379/`); without them the test prints why and passes, unless `CI` is set.

mod support;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::store::{DynStore, InMemoryStore};
use mnemograph_server_cluster::Cluster;
use serde_json::{json, Value};

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

/// Three processes on one database, each looking for due crons every `poll`; their URLs.
async fn cluster(db: &str, redis: &str, poll: Duration) -> Vec<String> {
    let saver = MySqlCheckpointer::connect(db).await.expect("connect the saver");
    saver.setup().await.expect("saver tables");
    let saver: Arc<dyn DynCheckpointer> = Arc::new(saver);
    let store: Arc<dyn DynStore> = Arc::new(InMemoryStore::new());
    let mut urls = Vec::new();
    for workers in [0, 2, 2] {
        let cluster = Cluster::connect(db, redis)
            .await
            .expect("cluster")
            .with_workers(workers)
            .with_key_prefix(format!("{db}:"));
        let server = support::graphs::server_on(saver.clone(), store.clone())
            .with_cron_poll_interval(poll)
            .with_backend(cluster);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        urls.push(format!("http://{}", listener.local_addr().unwrap()));
        tokio::spawn(server.serve(listener));
    }
    urls
}

/// Now, in UTC.
fn now() -> DateTime<Utc> {
    DateTime::from(std::time::SystemTime::now())
}

fn instant(text: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text.as_str().unwrap()).unwrap().with_timezone(&Utc)
}

/// The runs of thread `tid`, oldest first.
async fn runs_of(url: &str, tid: &str) -> Vec<Value> {
    let mut runs =
        get(&format!("{url}/threads/{tid}/runs?limit=1000")).await.as_array().cloned().unwrap_or_default();
    runs.reverse();
    runs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tick_of_a_cron_runs_once_on_a_cluster() {
    let Some(redis) = support::mysql::redis_url().await else { return };
    let Some(db) = support::mysql::fresh_database("cluster_crons").await else { return };
    let urls = cluster(&db, &redis, Duration::from_millis(50)).await;
    let tid =
        post(&format!("{}/threads", urls[0]), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    // Every two seconds (croniter's sixth field, seconds), on one thread, runs queued behind each other.
    let body = json!({"assistant_id": "chain", "schedule": "* * * * * */2", "input": {"log": []},
                      "multitask_strategy": "enqueue"});
    let start = now();
    let cron = post(&format!("{}/threads/{tid}/runs/crons", urls[1]), body).await;
    tokio::time::sleep(Duration::from_secs(12)).await;
    let cron_url = format!("{}/runs/crons/{}", urls[2], cron["cron_id"].as_str().unwrap());
    let response = support::http_client().delete(&cron_url).send().await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let end = now();
    // Runs made just before the delete finish.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let runs = runs_of(&urls[0], &tid).await;
    let made: Vec<DateTime<Utc>> = runs.iter().map(|r| instant(&r["created_at"])).collect();
    // The ticks the cron had while it existed: the even seconds between its creation and its
    // deletion. Three schedulers making a run each for some tick would pass their number; a tick
    // taken late on a busy machine merges with the next, so a few may be missing.
    let ticks = (start.timestamp() + 1..=end.timestamp()).filter(|s| s % 2 == 0).count();
    println!("{} runs for {ticks} ticks, at {made:?}", made.len());
    assert!(made.len() <= ticks, "more runs than ticks: {} for {ticks}: {made:?}", made.len());
    assert!(made.len() + 2 >= ticks, "ticks missed: {} runs for {ticks}: {made:?}", made.len());
    assert!(runs.iter().all(|r| r["status"] == "success"), "{runs:?}");
    let log = get(&format!("{}/threads/{tid}/state", urls[1])).await["values"]["log"].clone();
    assert_eq!(log.as_array().map(Vec::len), Some(2 * made.len()), "each run ran the graph once: {log}");
    support::mysql::drop_database(&db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tick_missed_while_every_process_was_down_runs_once_then_schedules_from_now() {
    let Some(redis) = support::mysql::redis_url().await else { return };
    let Some(db) = support::mysql::fresh_database("cluster_crons_missed").await else { return };
    // One process that does not look for an hour makes the cron: the scheduler is as good as down.
    let idle = cluster_of_one(&db, &redis).await;
    let tid = post(&format!("{idle}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    let body = json!({"assistant_id": "chain", "schedule": "0 * * * *", "input": {"log": []}});
    let cron = post(&format!("{idle}/threads/{tid}/runs/crons"), body).await;
    let cron_id = cron["cron_id"].as_str().unwrap().to_owned();
    // Its hourly ticks of the last three hours were missed.
    let missed = now() - chrono::Duration::hours(3);
    let pool = sqlx::MySqlPool::connect(&db).await.expect("connect");
    sqlx::query("UPDATE server_crons SET next_run_date = ? WHERE cron_id = ?")
        .bind(missed.to_rfc3339_opts(chrono::SecondsFormat::Micros, false))
        .bind(&cron_id)
        .execute(&pool)
        .await
        .expect("move the cron's next run date back");

    // The processes come up: one run for the missed ticks, the next tick at the next hour.
    let urls = cluster(&db, &redis, Duration::from_millis(50)).await;
    for _ in 0..100 {
        if runs_of(&urls[0], &tid).await.iter().any(|r| r["status"] == "success") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let runs = runs_of(&urls[0], &tid).await;
    assert_eq!(runs.len(), 1, "one run for three missed ticks: {runs:?}");
    let after = get(&format!("{}/runs/crons/{cron_id}", urls[1])).await;
    let next = instant(&after["next_run_date"]);
    let now = now();
    assert!(next > now && next - now <= chrono::Duration::hours(1), "{after}");
    assert_eq!(next.format("%M:%S").to_string(), "00:00", "on the hour: {after}");
    support::mysql::drop_database(&db).await;
}

/// One process of the cluster on `db` whose scheduler looks once an hour; its URL.
async fn cluster_of_one(db: &str, redis: &str) -> String {
    let saver = MySqlCheckpointer::connect(db).await.expect("connect the saver");
    saver.setup().await.expect("saver tables");
    let cluster =
        Cluster::connect(db, redis).await.expect("cluster").with_workers(0).with_key_prefix(format!("{db}:"));
    let server = support::graphs::server_on(Arc::new(saver), Arc::new(InMemoryStore::new()))
        .with_cron_poll_interval(Duration::from_secs(3600))
        .with_backend(cluster);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}
