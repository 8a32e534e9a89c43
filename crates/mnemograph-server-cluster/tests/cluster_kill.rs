//! Server processes of one cluster killed at random points while they run runs that clients
//! queued through the HTTP API: every run still ends once with success, each thread's state, read
//! through the API, holds every run's steps once and in queue order (nothing lost, nothing run
//! twice), and runs were taken over from killed processes on the way.
//!
//! The test binary is its own server: started with `CLUSTER_SERVER_DB` set, it serves the cluster
//! on `CLUSTER_SERVER_PORT` until it is killed. Needs `MYSQL_URL` (default
//! `mysql://root@127.0.0.1:3306/graph_test`) and `REDIS_URL` (default `redis://127.0.0.1:6379/`);
//! without them it prints why and passes, unless `CI` is set.

mod support;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_server::Server;
use mnemograph_server_cluster::queue::Lease;
use mnemograph_server_cluster::Cluster;
use serde_json::{json, Value};
use sqlx::{Connection, Row};
use support::mysql::{drop_database, fresh_database, redis_url};
use support::steps::{expected_log, steps};

/// How long each step of the kill tests' graph waits.
const PAUSE: Duration = Duration::from_millis(150);

const THREADS: usize = 4;
const RUNS_PER_THREAD: usize = 6;
const SERVERS: usize = 3;
const KILLS: usize = 8;
const LEASE: Lease = Lease { ttl: Duration::from_millis(1000) };

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    if let (Ok(db), Ok(port)) = (std::env::var("CLUSTER_SERVER_DB"), std::env::var("CLUSTER_SERVER_PORT")) {
        runtime.block_on(serve(&db, port.parse().expect("a port")));
        return;
    }
    runtime.block_on(killed_servers_lose_nothing_and_run_nothing_twice());
    println!("test killed_servers_lose_nothing_and_run_nothing_twice ... ok");
}

/// A server process of the cluster: answers requests and runs runs until killed.
async fn serve(db: &str, port: u16) {
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned());
    let saver = MySqlCheckpointer::connect(db).await.expect("saver");
    let cluster = Cluster::connect(db, &redis).await.expect("cluster").with_workers(4).with_lease(LEASE);
    // Keys of its own: other tests may run clusters on the same Redis.
    let cluster = cluster.with_key_prefix(format!("{db}:"));
    let server = Server::with_shared_saver(Arc::new(saver.clone()))
        .graph("steps", steps(PAUSE).compile().unwrap())
        .expect("one graph")
        .with_backend(cluster.with_saver(saver));
    // The port a killed process held may take a moment to be free again.
    let deadline = Instant::now() + Duration::from_secs(10);
    let listener = loop {
        match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
            Ok(l) => break l,
            Err(e) if Instant::now() < deadline => {
                eprintln!("port {port}: {e}; retrying");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("port {port}: {e}"),
        }
    };
    server.serve(listener).await.expect("serve");
}

fn spawn_server(db: &str, port: u16) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .env("CLUSTER_SERVER_DB", db)
        .env("CLUSTER_SERVER_PORT", port.to_string())
        .stdout(Stdio::null())
        .spawn()
        .expect("start a server process")
}

/// A request to the first process (from `start`) that answers it; processes being killed and
/// restarted may refuse connections for a while.
async fn call(
    http: &reqwest::Client,
    ports: &[u16],
    start: usize,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    for i in start.. {
        let port = ports[i % ports.len()];
        let mut request = http.request(method.clone(), format!("http://127.0.0.1:{port}{path}"));
        if let Some(body) = body {
            request = request.json(body);
        }
        match request.send().await {
            Ok(r) if r.status().is_success() => return r.json().await.expect("a JSON answer"),
            Ok(r) => panic!("{method} {path}: {} {}", r.status(), r.text().await.unwrap_or_default()),
            Err(e) => {
                assert!(Instant::now() < deadline, "no process answered {method} {path}: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    unreachable!("the loop only ends by returning or panicking")
}

async fn killed_servers_lose_nothing_and_run_nothing_twice() {
    let Some(redis) = redis_url().await else { return };
    std::env::set_var("REDIS_URL", &redis);
    let Some(db) = fresh_database("cluster_kill").await else { return };
    let saver = MySqlCheckpointer::connect(&db).await.unwrap();
    saver.setup().await.unwrap();
    let ports: Vec<u16> = (0..SERVERS)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port())
        .collect();
    let mut servers: Vec<Child> = ports.iter().map(|&p| spawn_server(&db, p)).collect();
    let http = support::http_client();

    // Every run is queued through the API, spread over the processes, before any is killed: a
    // request cut off by a kill would leave it unknown whether its run was queued.
    let mut threads = Vec::new();
    for t in 0..THREADS {
        let thread = call(&http, &ports, t, reqwest::Method::POST, "/threads", Some(&json!({}))).await;
        threads.push(thread["thread_id"].as_str().unwrap().to_owned());
    }
    for i in 0..RUNS_PER_THREAD {
        for (t, thread) in threads.iter().enumerate() {
            let body = json!({ "assistant_id": "steps", "input": { "tag": format!("t{t}r{i}") },
                               "multitask_strategy": "enqueue" });
            let path = format!("/threads/{thread}/runs");
            call(&http, &ports, i + t, reqwest::Method::POST, &path, Some(&body)).await;
        }
    }

    let (mut kills, mut seed) = (0, 0x2545_f491_u64);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let mut unfinished = 0;
        for (t, thread) in threads.iter().enumerate() {
            let path = format!("/threads/{thread}/runs?limit=100");
            let runs = call(&http, &ports, t, reqwest::Method::GET, &path, None).await;
            let runs = runs.as_array().unwrap();
            assert_eq!(runs.len(), RUNS_PER_THREAD, "thread {t} keeps every run it was given");
            unfinished += runs.iter().filter(|r| r["status"] != "success").count();
        }
        if unfinished == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "{unfinished} runs unfinished after 120 s");
        if kills < KILLS {
            // A pseudo-random process at a pseudo-random moment, reproducible from the seed.
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            tokio::time::sleep(Duration::from_millis(150 + (seed >> 33) % 400)).await;
            let victim = (seed >> 20) as usize % servers.len();
            servers[victim].kill().unwrap();
            servers[victim].wait().unwrap();
            servers[victim] = spawn_server(&db, ports[victim]);
            kills += 1;
        } else {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    for (t, thread) in threads.iter().enumerate() {
        let state =
            call(&http, &ports, t, reqwest::Method::GET, &format!("/threads/{thread}/state"), None).await;
        let expected = expected_log(t, RUNS_PER_THREAD);
        assert_eq!(state["values"]["log"], json!(expected), "thread {t}: every step once, in queue order");
        let record = call(&http, &ports, t, reqwest::Method::GET, &format!("/threads/{thread}"), None).await;
        assert_eq!(record["status"], "idle", "thread {t} is free once its runs ended");
    }
    for s in &mut servers {
        let _ = s.kill();
        let _ = s.wait();
    }
    let mut conn = sqlx::MySqlConnection::connect(&db).await.unwrap();
    let taken_over: i64 = sqlx::query("SELECT COUNT(*) AS n FROM server_runs WHERE attempt > 1")
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .get("n");
    println!("{kills} server processes killed, {taken_over} runs taken over");
    assert!(taken_over >= 1, "the kills never interrupted a run: the test proved nothing");
    conn.close().await.unwrap();
    drop_database(&db).await;
}
