//! The durable run queue on a real MariaDB/MySQL: queue order per thread, one run in progress
//! per thread, leases that run out and are taken over, and many workers claiming at once with
//! every run started exactly once.
//!
//! Needs `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_test`); each test uses a fresh
//! database. Without a server the tests print why and pass, unless `CI` is set.

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mnemograph_core::prelude::*;
use mnemograph_server_cluster::queue::{Claim, Finished, Lease, MySqlRunQueue, QueuedRun, Worker};
use serde_json::json;
use sqlx::{Connection, Row};
use support::mysql::{drop_database, fresh_database};

/// A queue on a fresh database (dropped by [`drop_database`]), or `None` (after saying why)
/// without a server outside CI.
async fn queue(label: &str) -> Option<(MySqlRunQueue, String)> {
    let url = fresh_database(&format!("queue_{label}")).await?;
    let q = MySqlRunQueue::connect(&url).await.unwrap();
    q.setup().await.unwrap();
    q.setup().await.expect("setup twice is harmless");
    Some((q, url))
}

fn run(id: &str, thread: &str) -> QueuedRun {
    QueuedRun::new(id, thread, json!({ "run": id }))
}

const LONG: Lease = Lease { ttl: Duration::from_secs(60) };

async fn claimed(q: &MySqlRunQueue, worker: &str) -> Option<String> {
    q.claim(worker, LONG).await.unwrap().map(|c| c.run.run_id)
}

#[tokio::test]
async fn a_thread_runs_one_run_at_a_time_in_queue_order() {
    let Some((q, url)) = queue("order").await else { return };
    for (id, thread) in [("a1", "A"), ("a2", "A"), ("b1", "B"), ("a3", "A")] {
        q.enqueue(&run(id, thread)).await.unwrap();
    }
    let a1 = q.claim("w1", LONG).await.unwrap().unwrap();
    assert_eq!((a1.run.run_id.as_str(), a1.attempt), ("a1", 1));
    assert_eq!(a1.run.payload, json!({"run": "a1"}));
    assert_eq!(claimed(&q, "w2").await.as_deref(), Some("b1"), "A is busy: B's run goes next");
    assert_eq!(claimed(&q, "w2").await, None, "a2 waits for a1, a3 for a2");
    assert!(q.finish(&a1, Finished::Success).await.unwrap());
    assert_eq!(q.status("a1").await.unwrap().as_deref(), Some("success"));
    assert_eq!(claimed(&q, "w3").await.as_deref(), Some("a2"));
    assert!(q.cancel_pending("a3").await.unwrap(), "a3 has not started");
    assert!(!q.cancel_pending("a2").await.unwrap(), "a2 has");
    assert_eq!(q.status("nope").await.unwrap(), None);
    assert!(q.enqueue(&run("a1", "A")).await.is_err(), "a run id is queued once");
    drop_database(&url).await;
}

/// Runs queued behind a busy thread are passed over in the database, however many there are:
/// a claim takes the oldest pending run of each idle thread.
#[tokio::test]
async fn many_runs_queued_on_a_busy_thread_do_not_hold_up_another_threads_run() {
    let Some((q, url)) = queue("stall").await else { return };
    for i in 0..40 {
        q.enqueue(&run(&format!("a{i:02}"), "A")).await.unwrap();
    }
    q.enqueue(&run("b00", "B")).await.unwrap();
    assert_eq!(claimed(&q, "w1").await.as_deref(), Some("a00"));
    assert_eq!(claimed(&q, "w2").await.as_deref(), Some("b00"), "B's run is not stuck behind A's queue");
    assert_eq!(claimed(&q, "w3").await, None, "A's next run waits for a00");
    let both = q.claim_many("w4", LONG, 8).await.unwrap();
    assert!(both.is_empty(), "nothing else may start: {both:?}");
    drop_database(&url).await;
}

const INDEX_COUNT: &str = "SELECT COUNT(*) AS n FROM information_schema.statistics \
    WHERE table_schema = DATABASE() AND table_name = 'server_runs' AND index_name = 'open_by_thread'";

/// Tables made before the claim's index get it from `setup`, which stays harmless to repeat.
#[tokio::test]
async fn setup_adds_the_claim_index_to_tables_made_without_it() {
    let Some((q, url)) = queue("index").await else { return };
    let mut conn = sqlx::MySqlConnection::connect(&url).await.unwrap();
    sqlx::query("ALTER TABLE server_runs DROP INDEX open_by_thread").execute(&mut conn).await.unwrap();
    let n: i64 = sqlx::query(INDEX_COUNT).fetch_one(&mut conn).await.unwrap().get("n");
    assert_eq!(n, 0, "the index is gone");
    q.setup().await.unwrap();
    q.setup().await.unwrap();
    let n: i64 = sqlx::query(INDEX_COUNT).fetch_one(&mut conn).await.unwrap().get("n");
    assert!(n > 0, "setup added the index back");
    conn.close().await.unwrap();
    drop_database(&url).await;
}

#[tokio::test]
async fn a_run_whose_lease_runs_out_is_taken_over_and_the_old_worker_is_refused() {
    let Some((q, url)) = queue("lease").await else { return };
    q.enqueue(&run("r1", "T")).await.unwrap();
    q.enqueue(&run("r2", "T")).await.unwrap();
    let short = Lease { ttl: Duration::from_millis(300) };
    let first = q.claim("dead", short).await.unwrap().unwrap();
    assert!(q.renew(&first, short).await.unwrap(), "the holder renews");
    assert_eq!(claimed(&q, "other").await, None, "a live lease is not taken over");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let taken = q.claim("other", LONG).await.unwrap().unwrap();
    assert_eq!((taken.run.run_id.as_str(), taken.attempt), ("r1", 2), "r1 is resumed, not r2 started");
    assert!(!q.renew(&first, short).await.unwrap(), "the old worker lost it");
    assert!(!q.finish(&first, Finished::Success).await.unwrap(), "and cannot finish it");
    assert_eq!(q.status("r1").await.unwrap().as_deref(), Some("running"));
    assert!(q.finish(&taken, Finished::Error).await.unwrap());
    assert_eq!(claimed(&q, "other").await.as_deref(), Some("r2"));
    drop_database(&url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_workers_start_every_run_once_never_two_on_a_thread() {
    let Some((q, url)) = queue("many").await else { return };
    let (threads, per_thread, workers) = (10, 12, 6);
    for i in 0..per_thread {
        for t in 0..threads {
            q.enqueue(&run(&format!("t{t}-r{i:02}"), &format!("t{t}"))).await.unwrap();
        }
    }
    // What the workers saw: runs started per thread in order, and the run in progress per thread.
    let started: Arc<Mutex<HashMap<String, Vec<String>>>> = Arc::default();
    let active: Arc<Mutex<HashMap<String, String>>> = Arc::default();
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let (q, started, active) = (q.clone(), started.clone(), active.clone());
            tokio::spawn(async move {
                let worker = format!("w{w}");
                let mut idle = 0;
                while idle < 20 {
                    let Some(claim): Option<Claim> = q.claim(&worker, LONG).await.unwrap() else {
                        idle += 1;
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        continue;
                    };
                    idle = 0;
                    let (run_id, thread) = (claim.run.run_id.clone(), claim.run.thread_id.clone());
                    if let Some(other) = active.lock().unwrap().insert(thread.clone(), run_id.clone()) {
                        panic!("{run_id} started while {other} was running on {thread}");
                    }
                    started.lock().unwrap().entry(thread.clone()).or_default().push(run_id.clone());
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    active.lock().unwrap().remove(&thread);
                    assert!(q.finish(&claim, Finished::Success).await.unwrap());
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let started = started.lock().unwrap().clone();
    for t in 0..threads {
        let expected: Vec<String> = (0..per_thread).map(|i| format!("t{t}-r{i:02}")).collect();
        assert_eq!(started[&format!("t{t}")], expected, "every run once, in queue order");
    }
    drop_database(&url).await;
}

#[derive(State, Clone, Default, Debug)]
struct Log {
    #[reducer(append)]
    log: Vec<String>,
}

async fn hello(_: Log) -> Result<LogUpdate> {
    Ok(LogUpdate::log(vec!["hello".to_owned()]))
}

#[tokio::test]
async fn a_worker_runs_queued_runs_and_records_how_they_ended() {
    let Some((q, url)) = queue("worker").await else { return };
    let graph = StateGraph::<Log>::new().add_node("hello", hello).add_edge(START, "hello").compile().unwrap();
    let worker = Worker::new(q.clone(), "w", InMemoryCheckpointer::new()).graph("hello", graph);
    q.enqueue(&QueuedRun::new("ok", "T", json!({"assistant_id": "hello", "input": {"log": ["x"]}})))
        .await
        .unwrap();
    q.enqueue(&QueuedRun::new("lost", "U", json!({"assistant_id": "nope", "input": {}}))).await.unwrap();
    q.enqueue(&QueuedRun::new("bad", "V", json!({"assistant_id": "hello", "input": "not an object"})))
        .await
        .unwrap();
    assert_eq!(worker.run_next().await.unwrap(), Some(Finished::Success));
    assert_eq!(worker.run_next().await.unwrap(), Some(Finished::Error), "no such graph");
    assert_eq!(worker.run_next().await.unwrap(), Some(Finished::Error), "an input that is not state");
    assert_eq!(worker.run_next().await.unwrap(), None);
    let statuses =
        [q.status("ok").await.unwrap(), q.status("lost").await.unwrap(), q.status("bad").await.unwrap()];
    assert_eq!(statuses.map(|s| s.unwrap()), ["success", "error", "error"]);
    drop_database(&url).await;
}
