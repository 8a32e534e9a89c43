//! How a cluster's workers run runs: a thread's long queue holds up no other thread, a worker
//! whose lease renewals fail stops its run before another takes it over (the run's steps run
//! once and `after_run` fires once), a thread whose state cannot be read back after a run keeps
//! its values and the run fails saying why, and a run's stream keeps only its latest events.
//!
//! Needs `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_test`) and `REDIS_URL` (default
//! `redis://127.0.0.1:6379/`); without them the tests print why and pass, unless `CI` is set.

mod support;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, DynCheckpointer, ListOptions, PruneStrategy,
};
use mnemograph_core::prelude::*;
use mnemograph_core::value::ChannelValue;
use mnemograph_core::{BoxFuture, CompiledGraph};
use mnemograph_server::{RunContext, RunEnd, RunHooks, Server};
use mnemograph_server_cluster::queue::{Lease, MySqlRunQueue};
use mnemograph_server_cluster::Cluster;
use serde_json::{json, Value};
use sqlx::Row;
use support::mysql::{drop_database, fresh_database, redis_url};
use support::steps::{expected_log, steps, Steps, StepsUpdate};

/// Serves `server` on a free port; its URL.
async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

async fn post(url: &str, body: Value) -> Value {
    let response = support::http_client().post(url).json(&body).send().await.unwrap();
    assert!(response.status().is_success(), "{url}: {}", response.status());
    response.json().await.unwrap()
}

async fn get(url: &str) -> Value {
    let response = support::http_client().get(url).send().await.unwrap();
    assert!(response.status().is_success(), "{url}: {}", response.status());
    response.json().await.unwrap()
}

/// Waits (up to a minute) until `check` holds.
async fn eventually<F: Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !check().await {
        assert!(Instant::now() < deadline, "{what}: not after a minute");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A cluster process on `db` with its keys under the database's name.
async fn cluster(db: &str, redis: &str, workers: usize) -> Cluster {
    Cluster::connect(db, redis)
        .await
        .expect("cluster")
        .with_workers(workers)
        .with_key_prefix(format!("{db}:"))
}

async fn mysql_saver(db: &str) -> Arc<dyn DynCheckpointer> {
    let saver = MySqlCheckpointer::connect(db).await.expect("saver");
    saver.setup().await.expect("saver tables");
    Arc::new(saver)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_on_another_thread_ends_while_a_busy_thread_still_has_many_queued() {
    let Some(redis) = redis_url().await else { return };
    let Some(db) = fresh_database("cluster_stall").await else { return };
    let server = Server::with_shared_saver(mysql_saver(&db).await)
        .graph("steps", steps(Duration::from_millis(100)).compile().unwrap())
        .unwrap()
        .with_backend(cluster(&db, &redis, 2).await);
    let url = serve(server).await;
    let busy = post(&format!("{url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    let other = post(&format!("{url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    for i in 0..40 {
        let body = json!({ "assistant_id": "steps", "input": { "tag": format!("t0r{i}") },
                           "multitask_strategy": "enqueue" });
        post(&format!("{url}/threads/{busy}/runs"), body).await;
    }
    let body = json!({ "assistant_id": "steps", "input": { "tag": "t1r0" } });
    let run = post(&format!("{url}/threads/{other}/runs"), body).await;
    let out = get(&format!("{url}/threads/{other}/runs/{}/join", run["run_id"].as_str().unwrap())).await;
    assert_eq!(out["log"], json!(expected_log(1, 1)));
    let runs = get(&format!("{url}/threads/{busy}/runs?limit=100")).await;
    let open = runs.as_array().unwrap().iter().filter(|r| r["status"] != "success").count();
    // The other thread's run ran beside the busy thread's, not after most of its queue.
    assert!(open >= 30, "the other thread's run ended only once {} of 40 runs had ended", 40 - open);
    drop_database(&db).await;
}

/// Counts `after_run` calls.
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl RunHooks<Steps> for Counting {
    fn after_run<'a>(
        &'a self,
        _: &'a CompiledGraph<Steps>,
        _: &'a RunContext,
        _: &'a RunEnd,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            self.0.fetch_add(1, Ordering::SeqCst);
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_renewals_fail_stops_and_the_run_runs_once_with_one_after_run() {
    let Some(redis) = redis_url().await else { return };
    let Some(db) = fresh_database("cluster_lease").await else { return };
    let lease = Lease { ttl: Duration::from_secs(2) };
    // Each step outlasts a third of the lease, the run outlasts the lease.
    let pause = Duration::from_millis(1000);
    // The first process renews on a pool that is closed: every renewal fails.
    let dead = sqlx::mysql::MySqlPoolOptions::new().connect_lazy(&db).unwrap();
    dead.close().await;
    let queue = MySqlRunQueue::connect(&db).await.unwrap().with_lease_pool(dead);
    queue.setup().await.unwrap();
    let first = Cluster::with_queue(queue, &redis).await.unwrap().with_workers(1).with_lease(lease);
    let first = first.with_key_prefix(format!("{db}:"));
    let (first_hooks, second_hooks) = (Counting::default(), Counting::default());
    let server = Server::with_shared_saver(mysql_saver(&db).await)
        .graph_with_hooks("steps", steps(pause).compile().unwrap(), first_hooks.clone())
        .unwrap()
        .with_backend(first);
    let first_url = serve(server).await;
    let thread =
        post(&format!("{first_url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    let run = post(
        &format!("{first_url}/threads/{thread}/runs"),
        json!({ "assistant_id": "steps", "input": { "tag": "t0r0" } }),
    )
    .await;
    let run_id = run["run_id"].as_str().unwrap().to_owned();
    let run_url = format!("{first_url}/threads/{thread}/runs/{run_id}");
    eventually("the first process runs the run", || async { get(&run_url).await["status"] == "running" })
        .await;

    let second = cluster(&db, &redis, 1).await.with_lease(lease);
    let server = Server::with_shared_saver(mysql_saver(&db).await)
        .graph_with_hooks("steps", steps(pause).compile().unwrap(), second_hooks.clone())
        .unwrap()
        .with_backend(second);
    let second_url = serve(server).await;
    let out = get(&format!("{second_url}/threads/{thread}/runs/{run_id}/join")).await;
    assert_eq!(out["log"], json!(expected_log(0, 1)), "every step once, in order");
    let state = get(&format!("{second_url}/threads/{thread}/state")).await;
    assert_eq!(state["values"]["log"], json!(expected_log(0, 1)));
    assert_eq!(get(&format!("{second_url}/threads/{thread}/runs/{run_id}")).await["status"], "success");

    let mut conn = <sqlx::MySqlConnection as sqlx::Connection>::connect(&db).await.unwrap();
    let attempt: u32 = sqlx::query("SELECT attempt FROM server_runs WHERE run_id = ?")
        .bind(&run_id)
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .get("attempt");
    // The first process may claim the run again once its lease ran out, and lose it again, or
    // end it when what is left takes less than a lease: either process may be the one that ends
    // it, and only that one calls after_run.
    assert!(attempt >= 2, "the run was taken over");
    let calls = || first_hooks.0.load(Ordering::SeqCst) + second_hooks.0.load(Ordering::SeqCst);
    eventually("the run's owner calls after_run", || async { calls() > 0 }).await;
    assert_eq!(calls(), 1, "after_run fires once");
    drop_database(&db).await;
}

/// A saver whose reads fail while `failing` is set.
struct FailingReads {
    saver: Arc<dyn DynCheckpointer>,
    failing: Arc<AtomicBool>,
}

impl FailingReads {
    fn refuse(&self) -> Result<(), CheckpointError> {
        if self.failing.load(Ordering::SeqCst) {
            return Err(CheckpointError::Backend("reads are failing".into()));
        }
        Ok(())
    }
}

impl Checkpointer for FailingReads {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.refuse()?;
        self.saver.get_tuple(config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.refuse()?;
        self.saver.list(config, options).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.saver.put(config, checkpoint, metadata, new_versions).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.saver.put_writes(config, writes, task_id, task_path).await
    }

    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        self.saver.commit(commit).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.saver.delete_thread(thread_id).await
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        self.saver.delete_for_runs(run_ids).await
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<(), CheckpointError> {
        self.saver.copy_thread(source, target).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        self.saver.prune(thread_ids, strategy).await
    }

    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        self.saver.remembered_latest(config)
    }

    fn get_next_version(&self, current: Option<&str>) -> String {
        self.saver.get_next_version(current)
    }
}

type NoteFn = Pin<Box<dyn Future<Output = Result<StepsUpdate>> + Send>>;

/// Logs the run's tag; a run tagged `break` makes the saver's reads fail from then on.
fn note(failing: Arc<AtomicBool>) -> impl Fn(Steps) -> NoteFn + Clone {
    move |s: Steps| {
        let failing = failing.clone();
        Box::pin(async move {
            if s.tag == "break" {
                failing.store(true, Ordering::SeqCst);
            }
            Ok(StepsUpdate::log(vec![s.tag.clone()]))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_thread_cannot_be_read_back_fails_and_the_thread_keeps_its_values() {
    let Some(redis) = redis_url().await else { return };
    let Some(db) = fresh_database("cluster_settle").await else { return };
    let failing = Arc::new(AtomicBool::new(false));
    let saver = Arc::new(FailingReads { saver: mysql_saver(&db).await, failing: failing.clone() });
    let graph = StateGraph::<Steps>::new().add_node("note", note(failing.clone())).add_edge(START, "note");
    let server = Server::with_shared_saver(saver)
        .graph("note", graph.compile().unwrap())
        .unwrap()
        .with_backend(cluster(&db, &redis, 1).await);
    let url = serve(server).await;
    let thread = post(&format!("{url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    let runs = format!("{url}/threads/{thread}/runs");
    let out =
        post(&format!("{runs}/wait"), json!({ "assistant_id": "note", "input": { "tag": "kept" } })).await;
    assert_eq!(out["log"], json!(["kept"]));
    let run = post(&runs, json!({ "assistant_id": "note", "input": { "tag": "break" } })).await;
    let run_id = run["run_id"].as_str().unwrap();
    let out = get(&format!("{runs}/{run_id}/join")).await;
    assert_eq!(out["__error__"]["error"], "StateUnavailable", "{out}");
    assert_eq!(get(&format!("{runs}/{run_id}")).await["status"], "error");
    let record = get(&format!("{url}/threads/{thread}")).await;
    assert_eq!(record["status"], "error");
    assert_eq!(record["values"]["log"], json!(["kept"]), "the thread keeps the values it had: {record}");
    assert_eq!(record["error"]["error"], "StateUnavailable");
    failing.store(false, Ordering::SeqCst);
    drop_database(&db).await;
}

/// Writes 500 custom events.
async fn chatty(_: Steps, rt: Runtime) -> Result<StepsUpdate> {
    for i in 0..500 {
        rt.write(json!(i));
    }
    Ok(StepsUpdate::log(vec!["chatted".to_owned()]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_stream_keeps_its_latest_events_and_a_trimmed_last_event_id_gets_those_kept() {
    let Some(redis) = redis_url().await else { return };
    let Some(db) = fresh_database("cluster_trim").await else { return };
    let graph = StateGraph::<Steps>::new().add_node("chatty", chatty).add_edge(START, "chatty");
    let server = Server::with_shared_saver(mysql_saver(&db).await)
        .graph("chatty", graph.compile().unwrap())
        .unwrap()
        .with_backend(cluster(&db, &redis, 1).await.with_stream_max_len(10));
    let url = serve(server).await;
    let thread = post(&format!("{url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    let runs = format!("{url}/threads/{thread}/runs");
    let run = post(&runs, json!({ "assistant_id": "chatty", "input": {}, "stream_mode": ["custom"] })).await;
    let run_id = run["run_id"].as_str().unwrap();
    get(&format!("{runs}/{run_id}/join")).await;

    let client = redis::Client::open(redis.as_str()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let kept: usize =
        redis::cmd("XLEN").arg(format!("{db}:run:{run_id}")).query_async(&mut conn).await.unwrap();
    assert!(kept < 500, "the stream was trimmed: {kept} entries");

    // An id older than every entry kept: the client gets the events still kept.
    let text = support::http_client()
        .get(format!("{runs}/{run_id}/stream"))
        .header("Last-Event-ID", "0-1")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let custom: Vec<i64> = text
        .split("\r\n\r\n")
        .filter(|frame| frame.contains("event: custom"))
        .filter_map(|frame| frame.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|data| data.trim().parse().unwrap())
        .collect();
    assert!(!custom.is_empty() && custom.len() < 500, "{} custom events", custom.len());
    assert_eq!(custom.last(), Some(&499), "the latest events are kept");
    let first = custom[0];
    assert_eq!(custom, (first..500).collect::<Vec<_>>(), "the kept events, oldest first, none missing");
    drop_database(&db).await;
}

/// How many rows of `table` the database holds for `thread_id`.
async fn rows_of(db: &str, table: &str, thread_id: &str) -> i64 {
    let pool = sqlx::MySqlPool::connect(db).await.expect("connect");
    let sql = format!("SELECT COUNT(*) AS n FROM {table} WHERE thread_id = ?");
    let n = sqlx::query(&sql).bind(thread_id).fetch_one(&pool).await.expect("count").get("n");
    pool.close().await;
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusters_finished_runs_and_idle_threads_are_swept_from_its_database() {
    let Some(redis) = redis_url().await else { return };
    let Some(db) = fresh_database("cluster_sweep").await else { return };
    let saver = mysql_saver(&db).await;
    let server =
        support::graphs::server_on(saver.clone(), Arc::new(mnemograph_core::store::InMemoryStore::new()))
            .with_run_retention(Duration::from_millis(500))
            .with_thread_ttl(Duration::from_secs(2))
            .with_sweep_interval(Duration::from_millis(200))
            .with_backend(cluster(&db, &redis, 4).await);
    let url = serve(server).await;
    let run = json!({"assistant_id": "chain", "input": {"log": []}});
    let idle = post(&format!("{url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    post(&format!("{url}/threads/{idle}/runs/wait"), run.clone()).await;
    let busy = post(&format!("{url}/threads"), json!({})).await["thread_id"].as_str().unwrap().to_owned();
    assert_eq!(rows_of(&db, "server_runs", &idle).await, 1);

    // The finished run goes after its retention; the thread and its state stay until the TTL.
    eventually("the finished run is swept", || async { rows_of(&db, "server_runs", &idle).await == 0 }).await;
    let status =
        support::http_client().get(format!("{url}/threads/{idle}/runs")).send().await.unwrap().status();
    assert!(status.is_success(), "the thread is still there: {status}");
    assert_eq!(get(&format!("{url}/threads/{idle}/state")).await["values"]["log"], json!(["a", "b"]));

    // A run keeps the other thread busy past the TTL: it stays, the idle one goes.
    let sleepy = json!({"assistant_id": "sleepy", "input": {"log": []}, "multitask_strategy": "enqueue"});
    for _ in 0..5 {
        post(&format!("{url}/threads/{busy}/runs"), sleepy.clone()).await;
    }
    eventually("the idle thread is swept", || async { rows_of(&db, "server_threads", &idle).await == 0 })
        .await;
    // A whole TTL and more later, the busy thread's runs still go on, and it stays.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let open = get(&format!("{url}/threads/{busy}/runs?status=pending")).await;
    assert!(!open.as_array().unwrap().is_empty(), "the busy thread still has runs waiting");
    assert_eq!(rows_of(&db, "server_threads", &busy).await, 1, "a busy thread outlives its TTL");
    let checkpoint = saver.get_tuple(&CheckpointConfig::thread(idle.clone())).await.expect("read the saver");
    assert!(checkpoint.is_none(), "its checkpoints went with it");
    let gone = support::http_client().get(format!("{url}/threads/{idle}")).send().await.unwrap().status();
    assert_eq!(gone, reqwest::StatusCode::NOT_FOUND);
    drop_database(&db).await;
}
