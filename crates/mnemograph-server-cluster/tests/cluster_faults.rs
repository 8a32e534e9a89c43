//! A cluster of three server processes while its MariaDB, then its Redis, is killed (`SIGKILL`)
//! and started again on the same data, as clients stream and join runs: every run ends, well or
//! with a recorded error, its end recorded once; no run stays pending or running; each thread's
//! checkpoint history is one chain with every step once, and its log every run's steps once, in
//! queue order; the server processes live through it all. A client streaming a run, which drops
//! its connection once per run and reconnects to another process with `Last-Event-ID` (and again
//! whenever the connection breaks), gets every event of the run in order, none skipped, and sees
//! the stream end only once the run did; a client joining a run gets its output, and a join
//! fails only while MariaDB is away.
//!
//! The test runs a MariaDB and a Redis of its own (`mariadb-install-db`, `mariadbd` and
//! `redis-server`, on the `PATH` or in `/usr/sbin`); without them it prints why and passes,
//! unless `CI` is set. Its Redis appends every write to disk before answering, so what Redis
//! acknowledged survives the kill. The test binary is its own server: started with
//! `FAULTS_SERVER_DB` set, it serves the cluster on `FAULTS_SERVER_PORT` until it is killed.

#[path = "cluster_faults/client.rs"]
mod client;
mod support;

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use client::{create, join, stream, Api, Joined, Streamed};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::prelude::*;
use mnemograph_core::{BoxFuture, CompiledGraph};
use mnemograph_server::{RunContext, RunEnd, RunHooks, Server};
use mnemograph_server_cluster::queue::{Lease, MySqlRunQueue};
use mnemograph_server_cluster::Cluster;
use serde_json::{json, Value};
use sqlx::{Connection, Row};
use support::services::{free_port, OwnMariaDb, OwnRedis};
use support::steps::{Steps, StepsUpdate};

const SERVERS: usize = 3;
const THREADS: usize = 6;
/// The graph's steps, in order.
const NODES: [&str; 3] = ["a", "b", "c"];
/// How many custom events each step writes, and the wait before each: a run takes about
/// `3 × TOKENS × TOKEN_PAUSE`, long enough that runs are in flight whenever a server dies.
const TOKENS: usize = 8;
const TOKEN_PAUSE: Duration = Duration::from_millis(25);
/// Short, so that runs whose leases lapse while MariaDB is away are taken over within the test.
const LEASE: Lease = Lease { ttl: Duration::from_secs(2) };

/// A service the test kills.
#[derive(Debug, Clone, Copy)]
enum Service {
    MariaDb,
    Redis,
}

/// What the test kills, in turn, and for how long: MariaDB for less than a lease (renewals
/// resume, but checkpoint writes were refused meanwhile) and for more (every run in flight loses
/// its lease), Redis for less than and for more than the longest wait between two writes of a
/// run's events.
const FAULTS: [(Service, Duration); 4] = [
    (Service::MariaDb, Duration::from_millis(1000)),
    (Service::MariaDb, Duration::from_millis(2500)),
    (Service::Redis, Duration::from_millis(2500)),
    (Service::Redis, Duration::from_millis(6000)),
];
/// How long after MariaDB answers again requests may still fail on the connections its death
/// broke.
const BROKEN_CONNECTIONS: Duration = Duration::from_secs(2);
/// How long the clients run before, between and after the faults.
const BETWEEN_FAULTS: Duration = Duration::from_secs(4);
/// How long a client waits for one chunk of a stream; the server sends a heartbeat every 5 s.
const CHUNK_TIMEOUT: Duration = Duration::from_secs(15);
/// The longest any one client operation (creating a run, streaming it) may take.
const PATIENCE: Duration = Duration::from_secs(90);

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    if let Ok(db) = std::env::var("FAULTS_SERVER_DB") {
        let port = std::env::var("FAULTS_SERVER_PORT").expect("a port").parse().expect("a port");
        let redis = std::env::var("FAULTS_SERVER_REDIS").expect("a Redis URL");
        let ends = PathBuf::from(std::env::var_os("FAULTS_SERVER_ENDS").expect("a file for run ends"));
        runtime.block_on(serve(&db, &redis, port, ends));
        return;
    }
    let started = Instant::now();
    runtime.block_on(a_cluster_rides_out_its_database_and_its_redis_dying());
    println!("test a_cluster_rides_out_its_database_and_its_redis_dying ... ok ({:.1?})", started.elapsed());
}

type StepFn = Pin<Box<dyn Future<Output = Result<StepsUpdate>> + Send>>;

/// A step that writes `TOKENS` custom events `{tag, node, i}`, one every `TOKEN_PAUSE`, then
/// logs `{tag}:{node}`.
fn step(node: &'static str) -> impl Fn(Steps, Runtime) -> StepFn + Clone {
    move |s: Steps, rt: Runtime| {
        Box::pin(async move {
            for i in 0..TOKENS {
                tokio::time::sleep(TOKEN_PAUSE).await;
                rt.write(json!({ "tag": s.tag, "node": node, "i": i }));
            }
            Ok(StepsUpdate::log(vec![format!("{}:{node}", s.tag)]))
        })
    }
}

/// `a → b → c`.
fn graph() -> StateGraph<Steps> {
    StateGraph::<Steps>::new()
        .add_node("a", step("a"))
        .add_node("b", step("b"))
        .add_node("c", step("c"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
}

/// Appends `{run_id} {status}` to a file shared by the server processes for every `after_run`,
/// which the process that recorded the run's end calls once that end is recorded.
#[derive(Clone)]
struct EndLog(PathBuf);

impl RunHooks<Steps> for EndLog {
    fn after_run<'a>(
        &'a self,
        _: &'a CompiledGraph<Steps>,
        context: &'a RunContext,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let status = match end {
                RunEnd::Success => "success",
                RunEnd::Error(_) => "error",
                RunEnd::Cancelled => "interrupted",
                other => panic!("an end this test does not know: {other:?}"),
            };
            // One short write to a file opened for appending: the processes' lines do not mix.
            let line = format!("{} {status}\n", context.run_id);
            let mut file = std::fs::OpenOptions::new().append(true).create(true).open(&self.0).expect("ends");
            std::io::Write::write_all(&mut file, line.as_bytes()).expect("write an end");
        })
    }
}

/// A server process of the cluster: answers requests and runs runs until killed.
async fn serve(db: &str, redis: &str, port: u16, ends: PathBuf) {
    // Its warnings go to its log, which the test names when it fails.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let saver = MySqlCheckpointer::connect(db).await.expect("saver");
    let cluster = Cluster::connect(db, redis).await.expect("cluster").with_workers(4).with_lease(LEASE);
    // The runs' writes are fenced in their transactions on the cluster's own saver.
    let server = Server::with_shared_saver(Arc::new(saver.clone()))
        .graph_with_hooks("tokens", graph().compile().unwrap(), EndLog(ends))
        .expect("one graph")
        .with_backend(cluster.with_saver(saver));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("the server's port");
    server.serve(listener).await.expect("serve");
}

/// Where the test keeps its services' data, the server processes' logs and the run ends; kept
/// when the test fails, to be read.
struct Workdir(PathBuf);

impl Workdir {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("cluster_faults_{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("a work directory");
        Self(dir)
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the test's services' data and the servers' logs are in {}", self.0.display());
        } else if let Err(e) = std::fs::remove_dir_all(&self.0) {
            eprintln!("removing {}: {e}", self.0.display());
        }
    }
}

/// The server processes, killed when the test ends however it ends.
struct Servers(Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for s in &mut self.0 {
            // An error means it already exited, which is what is asked.
            let _ = s.kill();
            let _ = s.wait();
        }
    }
}

fn spawn_server(db: &str, redis: &str, port: u16, dir: &Path) -> Child {
    let log = std::fs::File::create(dir.join(format!("server-{port}.log"))).expect("a server log");
    Command::new(std::env::current_exe().unwrap())
        .env("FAULTS_SERVER_DB", db)
        .env("FAULTS_SERVER_REDIS", redis)
        .env("FAULTS_SERVER_PORT", port.to_string())
        .env("FAULTS_SERVER_ENDS", dir.join("ends.txt"))
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("start a server process")
}

/// What a client did: the runs it streamed, or those it joined.
#[derive(Default)]
struct Report {
    streamed: Vec<Streamed>,
    joined: Vec<Joined>,
}

/// One client per thread: queues a run, streams it (or, on every third thread, joins it) to
/// its end, and again, while `queueing`.
async fn client(api: Api, t: usize, thread_id: String, queueing: Arc<AtomicBool>) -> Report {
    let mut report = Report::default();
    for i in 0.. {
        if !queueing.load(Ordering::Acquire) {
            break;
        }
        let (run_id, tag) = create(&api, t + i, &thread_id, &format!("t{t}r{i}")).await;
        if t % 3 == 2 {
            report.joined.push(join(&api, t + i + 1, &thread_id, &run_id, &tag).await);
            continue;
        }
        // A pseudo-random point of the run's 25 events, the metadata event and 24 custom ones.
        let drop_after = 1 + (t * 7 + i * 5) % 24;
        report.streamed.push(stream(&api, t + i + 1, &thread_id, &run_id, &tag, drop_after).await);
    }
    report
}

/// Redis entry ids, `{ms}-{seq}`, as numbers that order as Redis orders them.
fn entry_id(id: &str) -> (u64, u64) {
    let (ms, seq) = id.split_once('-').unwrap_or_else(|| panic!("a Redis entry id: {id}"));
    (ms.parse().expect("ms"), seq.parse().expect("seq"))
}

/// What a client got of a run: ids only increasing; the `metadata` event first; every custom
/// event after all those before it in the run (within its step, and the whole previous step for
/// a step's first): a run taken over or a batch written twice sends events again, never
/// skips one; and, for a run that succeeded, every event of every step.
///
/// A cluster's stream keeps about its latest `STREAM_MAX_LEN` events (`Cluster::with_stream_max_len`)
/// for the event retention after its run ended (`Server::with_event_retention`, a minute): a run
/// here writes a few dozen, even taken over, and its client reconnects within seconds, so none
/// may be missing.
fn check_stream(run: &Streamed) {
    let who = format!("run {} ({})", run.run_id, run.tag);
    assert_eq!(run.frames.first().map(|f| f.event.as_str()), Some("metadata"), "{who}: metadata first");
    for pair in run.frames.windows(2) {
        assert!(
            entry_id(&pair[0].id) < entry_id(&pair[1].id),
            "{who}: ids increase: {} then {}",
            pair[0].id,
            pair[1].id
        );
    }
    // The highest index seen of each step's events, when the client saw all those below it.
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for frame in run.frames.iter().filter(|f| f.event == "custom") {
        assert_eq!(frame.data["tag"], run.tag.as_str(), "{who}: its own events only");
        let node = frame.data["node"].as_str().expect("a node");
        let i = frame.data["i"].as_u64().expect("an index") as usize;
        let position = NODES.iter().position(|n| *n == node).expect("a node of the graph");
        if i == 0 && position > 0 {
            assert_eq!(
                seen.get(NODES[position - 1]),
                Some(&(TOKENS - 1)),
                "{who}: {node} starts only after the whole step before it: {:?}",
                customs(run)
            );
        }
        let next = seen.get(node).map_or(0, |highest| highest + 1);
        assert!(i <= next, "{who}: {node}:{i} came before {node}:{next}: {:?}", customs(run));
        if i == next {
            seen.insert(NODES[position], i);
        }
    }
    if run.status_at_end == "success" {
        assert_eq!(
            seen.get("c"),
            Some(&(TOKENS - 1)),
            "{who}: every event of a run that succeeded: {:?}",
            customs(run)
        );
    }
}

/// A run's custom events as `node:i`, for failure messages.
fn customs(run: &Streamed) -> Vec<String> {
    run.frames
        .iter()
        .filter(|f| f.event == "custom")
        .map(|f| format!("{}:{}", f.data["node"].as_str().unwrap_or("?"), f.data["i"]))
        .collect()
}

/// Every run the threads have, oldest first, once none is pending or running: waits for that
/// up to 30 s, a lease and more after the clients stopped.
async fn ended_runs(api: &Api, threads: &[String]) -> Vec<Vec<Value>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut records = Vec::new();
        for (t, thread) in threads.iter().enumerate() {
            let path = format!("/threads/{thread}/runs?limit=1000");
            let mut runs = api.call(t, reqwest::Method::GET, &path, None).await.as_array().unwrap().clone();
            // Oldest first: the order they were queued in.
            runs.reverse();
            records.push(runs);
        }
        let open = records
            .iter()
            .flatten()
            .filter(|r| matches!(r["status"].as_str(), Some("pending" | "running")))
            .count();
        if open == 0 {
            return records;
        }
        assert!(
            Instant::now() < deadline,
            "{open} runs still pending or running 30 s after the clients stopped"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Each run's end was recorded once, as its status says: `after_run`, which the servers log to
/// `ends`, fires once per recorded end.
fn check_ends_recorded_once(ends: &Path, runs: &[&Value]) {
    let ends = std::fs::read_to_string(ends).unwrap_or_default();
    let mut ended: HashMap<&str, Vec<&str>> = HashMap::new();
    for line in ends.lines() {
        let (run_id, status) = line.split_once(' ').expect("`run_id status`");
        ended.entry(run_id).or_default().push(status);
    }
    for run in runs {
        let run_id = run["run_id"].as_str().unwrap();
        let status = run["status"].as_str().unwrap();
        assert!(matches!(status, "success" | "error"), "run {run_id} ended well or failed: {run}");
        assert_eq!(ended.get(run_id), Some(&vec![status]), "run {run_id}: its end recorded once");
    }
    assert_eq!(ended.len(), runs.len(), "no end for a run the threads do not have");
}

/// Thread `t`'s checkpoints are one chain with every step once, its log holds every run's steps
/// once and in queue order (all of them for a run that ended well), and it is not left busy.
async fn check_thread(api: &Api, t: usize, thread: &str, runs: &[Value]) {
    let body = json!({ "limit": 1000 });
    let history =
        api.call(t, reqwest::Method::POST, &format!("/threads/{thread}/history"), Some(&body)).await;
    let history = history.as_array().unwrap();
    assert!(history.len() < 1000, "the whole history fits a page");
    // Each run that ended well left its input's checkpoint and one per step at least.
    let succeeded = runs.iter().filter(|r| r["status"] == "success").count();
    assert!(history.len() >= 4 * succeeded, "thread {t}: {} checkpoints for {succeeded} runs", history.len());
    let steps: Vec<i64> = history.iter().map(|c| c["metadata"]["step"].as_i64().expect("a step")).collect();
    let mut distinct = steps.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), steps.len(), "thread {t}: every step once: {steps:?}");
    for pair in history.windows(2) {
        assert_eq!(pair[0]["parent_checkpoint_id"], pair[1]["checkpoint_id"], "thread {t}: one chain");
    }

    let state = api.call(t, reqwest::Method::GET, &format!("/threads/{thread}/state"), None).await;
    let log: Vec<&str> =
        state["values"]["log"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
    let mut expected = Vec::new();
    for run in runs {
        let tag = run["kwargs"]["input"]["tag"].as_str().expect("a tag");
        let done: Vec<&str> = log.iter().copied().filter(|e| e.starts_with(&format!("{tag}:"))).collect();
        let every: Vec<String> = NODES.iter().map(|n| format!("{tag}:{n}")).collect();
        if run["status"] == "success" {
            assert_eq!(done, every, "thread {t}: run {tag} ran every step once");
        } else {
            assert!(
                every.starts_with(&done.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>()),
                "thread {t}: failed run {tag} ran steps in order, once: {done:?}"
            );
        }
        expected.extend(done);
    }
    assert_eq!(log, expected, "thread {t}: the runs' steps in queue order");
    let record = api.call(t, reqwest::Method::GET, &format!("/threads/{thread}"), None).await;
    assert_ne!(record["status"], "busy", "thread {t} is free once its runs ended");
}

/// What a client got of a run it joined, which ended with `status`: the thread's values with the
/// run's steps last, or the run's error; and a join failed only while the database that holds
/// the run's record was away (or just after, on the connections its death broke), never for
/// Redis being away.
fn check_join(run: &Joined, status: &str, database_away: &[(Instant, Instant)]) {
    for failed in &run.failures {
        assert!(
            database_away.iter().any(|(from, to)| (*from..=*to + BROKEN_CONNECTIONS).contains(failed)),
            "run {} ({}): a join failed while the database was up",
            run.run_id,
            run.tag
        );
    }
    if status == "success" {
        let log: Vec<&str> = run.output["log"]
            .as_array()
            .expect("the thread's log")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let steps: Vec<String> = NODES.iter().map(|n| format!("{}:{n}", run.tag)).collect();
        assert!(
            log.ends_with(&steps.iter().map(String::as_str).collect::<Vec<_>>()),
            "run {}: joined with its steps last: {log:?}",
            run.tag
        );
    } else {
        assert!(
            run.output["__error__"].is_object(),
            "run {}: joined with its error: {}",
            run.tag,
            run.output
        );
    }
}

async fn a_cluster_rides_out_its_database_and_its_redis_dying() {
    // Dropped last: after the processes whose files it holds are killed.
    let dir = Workdir::new();
    let Some(mut redis) = OwnRedis::start(&dir.0).await else { return };
    let Some(mut mariadb) = OwnMariaDb::start(&dir.0).await else { return };
    let mut conn = sqlx::MySqlConnection::connect(&mariadb.url("information_schema")).await.unwrap();
    sqlx::raw_sql("CREATE DATABASE faults CHARACTER SET utf8mb4").execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
    let db = mariadb.url("faults");
    MySqlCheckpointer::connect(&db).await.unwrap().setup().await.unwrap();
    // The cluster's tables, before the processes race to make them.
    MySqlRunQueue::connect(&db).await.unwrap().setup().await.unwrap();
    let ports: Vec<u16> = (0..SERVERS).map(|_| free_port()).collect();
    let mut servers = Servers(ports.iter().map(|&p| spawn_server(&db, &redis.url(), p, &dir.0)).collect());
    let api = Api { http: support::http_client(), ports: ports.clone() };
    for p in 0..SERVERS {
        api.call(p, reqwest::Method::GET, "/ok", None).await;
    }

    let mut threads = Vec::new();
    for t in 0..THREADS {
        let thread = api.call(t, reqwest::Method::POST, "/threads", Some(&json!({}))).await;
        threads.push(thread["thread_id"].as_str().unwrap().to_owned());
    }
    let queueing = Arc::new(AtomicBool::new(true));
    let clients: Vec<_> = threads
        .iter()
        .enumerate()
        .map(|(t, thread)| tokio::spawn(client(api.clone(), t, thread.clone(), queueing.clone())))
        .collect();

    // When MariaDB was away: from its kill to when it answered again.
    let mut database_away = Vec::new();
    for (service, outage) in FAULTS {
        tokio::time::sleep(BETWEEN_FAULTS).await;
        let killed = Instant::now();
        match service {
            Service::MariaDb => mariadb.kill(),
            Service::Redis => redis.kill(),
        }
        tokio::time::sleep(outage).await;
        match service {
            Service::MariaDb => mariadb.restart().await,
            Service::Redis => redis.restart().await,
        }
        println!("{service:?} killed, back after {:.1?}", killed.elapsed());
        if let Service::MariaDb = service {
            database_away.push((killed, Instant::now()));
        }
    }
    tokio::time::sleep(BETWEEN_FAULTS).await;
    queueing.store(false, Ordering::Release);

    let (mut streamed, mut joined) = (Vec::new(), Vec::new());
    for c in clients {
        let report = c.await.expect("a client");
        streamed.extend(report.streamed);
        joined.extend(report.joined);
    }
    for (p, server) in servers.0.iter_mut().enumerate() {
        assert!(server.try_wait().unwrap().is_none(), "server process {p} died");
    }

    let records = ended_runs(&api, &threads).await;
    let all: Vec<&Value> = records.iter().flatten().collect();
    check_ends_recorded_once(&dir.0.join("ends.txt"), &all);
    for (t, thread) in threads.iter().enumerate() {
        check_thread(&api, t, thread, &records[t]).await;
    }
    for run in &streamed {
        assert!(
            matches!(run.status_at_end.as_str(), "success" | "error"),
            "run {} ({}): its stream ended while the run was {}, after {} events: {:?}",
            run.run_id,
            run.tag,
            run.status_at_end,
            run.frames.len(),
            customs(run),
        );
        check_stream(run);
    }
    let status = |run_id: &str| {
        all.iter().find(|r| r["run_id"] == run_id).expect("a run of its thread")["status"].clone()
    };
    for run in &joined {
        check_join(run, status(&run.run_id).as_str().unwrap(), &database_away);
    }

    let mut conn = sqlx::MySqlConnection::connect(&db).await.unwrap();
    let taken_over: i64 = sqlx::query("SELECT COUNT(*) AS n FROM server_runs WHERE attempt > 1")
        .fetch_one(&mut conn)
        .await
        .unwrap()
        .get("n");
    conn.close().await.unwrap();
    let failed: Vec<&str> =
        all.iter().filter(|r| r["status"] == "error").map(|r| r["run_id"].as_str().unwrap()).collect();
    let connections: usize = streamed.iter().map(|s| s.connections).sum();
    let broken: usize = streamed.iter().map(|s| s.broken).sum();
    let join_failures: usize = joined.iter().map(|j| j.failures.len()).sum();
    println!(
        "{} runs ({} streamed, {} joined, {} failed {failed:?}, {taken_over} taken over); \
         {connections} stream connections, {broken} broken; {join_failures} joins failed",
        all.len(),
        streamed.len(),
        joined.len(),
        failed.len()
    );
    assert!(taken_over >= 1, "the outages interrupted no run: the test proved nothing");
    assert!(streamed.len() >= THREADS * 3, "the clients streamed {} runs only", streamed.len());
    assert!(joined.len() >= THREADS, "the clients joined {} runs only", joined.len());
}
