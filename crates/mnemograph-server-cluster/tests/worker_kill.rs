//! Worker processes killed at random points while they run queued runs: every run still ends
//! exactly once, each thread's log holds every run's steps once and in queue order (nothing lost,
//! nothing run twice), and runs were taken over from killed workers on the way.
//!
//! The test binary is its own worker: started with `QUEUE_WORKER_URL` set, it runs a worker on
//! that database until it is killed. Needs `MYSQL_URL` (default
//! `mysql://root@127.0.0.1:3306/graph_test`); without a server it prints why and passes, unless
//! `CI` is set.

mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::prelude::*;
use mnemograph_server_cluster::queue::{Lease, MySqlRunQueue, QueuedRun, Worker, IDLE};
use serde_json::json;
use sqlx::{Connection, Row};
use support::mysql::{drop_database, fresh_database};
use support::steps::{expected_log, steps};

/// How long each step of the kill tests' graph waits.
const PAUSE: Duration = Duration::from_millis(100);

const THREADS: usize = 4;
const RUNS_PER_THREAD: usize = 6;
const WORKERS: usize = 3;
const KILLS: usize = 8;
const LEASE: Lease = Lease { ttl: Duration::from_millis(1000) };

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    if let Ok(url) = std::env::var("QUEUE_WORKER_URL") {
        let name = std::env::var("QUEUE_WORKER_NAME").unwrap_or_else(|_| "worker".to_owned());
        runtime.block_on(work(&url, &name));
        return;
    }
    runtime.block_on(killed_workers_lose_nothing_and_run_nothing_twice());
    println!("test killed_workers_lose_nothing_and_run_nothing_twice ... ok");
}

/// A worker process: runs queued runs until killed.
async fn work(url: &str, name: &str) {
    let queue = MySqlRunQueue::connect(url).await.expect("queue");
    let saver = MySqlCheckpointer::connect(url).await.expect("saver");
    let worker =
        Worker::new(queue, name, saver).with_lease(LEASE).graph("steps", steps(PAUSE).compile().unwrap());
    worker.run(IDLE).await.expect("the queue's database fails");
}

fn spawn_worker(url: &str, n: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .env("QUEUE_WORKER_URL", url)
        .env("QUEUE_WORKER_NAME", format!("w{n}"))
        .stdout(Stdio::null())
        .spawn()
        .expect("start a worker process")
}

async fn killed_workers_lose_nothing_and_run_nothing_twice() {
    let Some(url) = fresh_database("kill").await else { return };
    let queue = MySqlRunQueue::connect(&url).await.unwrap();
    queue.setup().await.unwrap();
    let saver = MySqlCheckpointer::connect(&url).await.unwrap();
    saver.setup().await.unwrap();
    let threads: Vec<String> = (0..THREADS).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    let mut run_ids = Vec::new();
    for i in 0..RUNS_PER_THREAD {
        for (t, thread) in threads.iter().enumerate() {
            let run_id = format!("t{t}r{i}");
            let body = json!({ "assistant_id": "steps", "input": { "tag": run_id } });
            queue.enqueue(&QueuedRun::new(run_id.as_str(), thread.as_str(), body)).await.unwrap();
            run_ids.push(run_id);
        }
    }

    let mut workers: Vec<Child> = (0..WORKERS).map(|n| spawn_worker(&url, n)).collect();
    let (mut kills, mut started, mut seed) = (0, WORKERS, 0x2545_f491_u64);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let mut pending = 0;
        for id in &run_ids {
            if queue.status(id).await.unwrap().as_deref() != Some("success") {
                pending += 1;
            }
        }
        if pending == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "{pending} runs unfinished after 120 s");
        if kills < KILLS {
            // A pseudo-random worker at a pseudo-random moment, reproducible from the seed.
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            tokio::time::sleep(Duration::from_millis(150 + (seed >> 33) % 400)).await;
            let victim = (seed >> 20) as usize % workers.len();
            workers[victim].kill().unwrap();
            workers[victim].wait().unwrap();
            workers[victim] = spawn_worker(&url, started);
            kills += 1;
            started += 1;
        } else {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    for w in &mut workers {
        let _ = w.kill();
        let _ = w.wait();
    }

    let graph = steps(PAUSE).compile_with(saver).unwrap();
    for (t, thread) in threads.iter().enumerate() {
        let log = graph.get_state(&RunConfig::thread(thread.as_str())).await.unwrap().values.log;
        let expected = expected_log(t, RUNS_PER_THREAD);
        assert_eq!(log, expected, "thread {t}: every step once, in queue order");
    }
    let mut conn = sqlx::MySqlConnection::connect(&url).await.unwrap();
    let taken_over: i64 = sqlx::query("SELECT COUNT(*) AS n FROM server_runs WHERE attempt > 1")
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .get("n");
    println!("{kills} workers killed, {taken_over} runs taken over");
    assert!(taken_over >= 1, "the kills never interrupted a run: the test proved nothing");
    conn.close().await.unwrap();
    drop_database(&url).await;
}
