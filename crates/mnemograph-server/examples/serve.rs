//! Serves three small graphs over LangGraph's API, for trying the server with an SDK client and
//! for the load benchmarks (`scripts/bench-server.sh`, `scripts/bench-server-load.sh`): `chain`
//! (two nodes appending to a log), `pause` (one node that waits 50 ms, as a model call would) and
//! `talk` (one node that streams an AI reply of `TALK_TOKENS` tokens, 2000 by default, as a model
//! streams one).
//!
//! `RUN_RETENTION_SECS`, `EVENT_RETENTION_SECS` and `SWEEP_SECS` set how long finished runs and
//! their events stay and how often they are freed (an hour, a minute and a minute by default);
//! `EVENT_LOG_BYTES` how many bytes of droppable events each run keeps for late readers (1 MiB).
//!
//! Threads are checkpointed in memory, in MySQL/MariaDB when `MYSQL_URL` is set, in Redis when
//! `REDIS_CHECKPOINTS_URL` is set (`redis://host:port/`), in PostgreSQL when `DATABASE_URL` is a
//! `postgres://` URL, or in a SQLite file when `SQLITE_PATH` is set; the last two hold the store's
//! items too (otherwise the store is in memory). With
//! `CLUSTER=1` as well (and `REDIS_URL`, default `redis://127.0.0.1:6379/`; the `cluster`
//! feature), the process joins the cluster on that database: start several, on different ports,
//! and any of them serves any thread (`CLUSTER_WORKERS` runs at once per process, 64 by default).
//!
//! Only requests addressed to loopback names are answered: to serve others, name the hosts in
//! `ALLOWED_HOSTS` (comma-separated, or `*` for any). `CORS_ORIGINS` (comma-separated) lets pages
//! of those origins call the server from a browser.
//!
//! `AUTH_TOKENS="alice:token-a,bob:token-b"` makes every request but `/ok` and `/info` need
//! `Authorization: Bearer <token>`; each user owns the threads, runs and store items it creates
//! (under the store namespace `[user, ...]`) and sees nothing of the others'. Without it, the
//! server refuses to listen on an address other than loopback unless given `--no-auth`.
//!
//! The process allocates with jemalloc, whose background thread hands memory freed after a load
//! (finished runs' events past their retention) back to the system within seconds; glibc's
//! malloc keeps most of it in its arenas for reuse, so the process's RSS stays at its peak.
//!
//! `cargo run -p mnemograph-server --example serve -- [--no-auth] [ADDRESS (127.0.0.1:2024)]`

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::prelude::*;
use mnemograph_server::auth::BearerTokens;
use mnemograph_server::Server;

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(State, Clone, Default, Debug)]
struct Log {
    #[reducer(append)]
    log: Vec<String>,
}

async fn a(_: Log) -> Result<LogUpdate> {
    Ok(LogUpdate::log(vec!["a".to_owned()]))
}

async fn b(_: Log) -> Result<LogUpdate> {
    Ok(LogUpdate::log(vec!["b".to_owned()]))
}

async fn wait(_: Log) -> Result<LogUpdate> {
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(LogUpdate::log(vec!["waited".to_owned()]))
}

/// How many tokens `talk` streams between two pauses: a model's tokens arrive in bursts, and the
/// pause lets the other runs' streams interleave with this one's, as they do on a real server.
const TOKENS_PER_PAUSE: usize = 50;

/// Numbers the replies of this process, so that each reply's message id is its own.
static REPLIES: AtomicU64 = AtomicU64::new(0);

/// Streams `tokens` tokens (`t0 t1 t2 ...`) as chunks of one AI message, then adds the whole
/// message to the conversation.
async fn talk(rt: Runtime, tokens: usize) -> Result<MessagesStateUpdate> {
    let id = format!("talk-{}", REPLIES.fetch_add(1, Ordering::Relaxed));
    let mut reply = String::new();
    for t in 0..tokens {
        let token = format!("t{t} ");
        reply.push_str(&token);
        rt.stream_message(Message::ai(token).with_id(id.clone()));
        if (t + 1) % TOKENS_PER_PAUSE == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    Ok(MessagesStateUpdate::messages(vec![Message::ai(reply).with_id(id)]))
}

/// A duration of whole seconds from the environment variable `name`, if set.
fn seconds(name: &str) -> std::result::Result<Option<Duration>, Box<dyn std::error::Error>> {
    match std::env::var(name) {
        Ok(s) => Ok(Some(Duration::from_secs(s.parse().map_err(|e| format!("{name}={s}: {e}"))?))),
        Err(_) => Ok(None),
    }
}

/// The retention, sweep interval and event log size of `RUN_RETENTION_SECS`,
/// `EVENT_RETENTION_SECS`, `SWEEP_SECS` and `EVENT_LOG_BYTES`, where set.
fn retained(mut server: Server) -> std::result::Result<Server, Box<dyn std::error::Error>> {
    if let Some(d) = seconds("RUN_RETENTION_SECS")? {
        server = server.with_run_retention(d);
    }
    if let Some(d) = seconds("EVENT_RETENTION_SECS")? {
        server = server.with_event_retention(d);
    }
    if let Some(d) = seconds("SWEEP_SECS")? {
        server = server.with_sweep_interval(d);
    }
    if let Ok(b) = std::env::var("EVENT_LOG_BYTES") {
        server = server.with_event_log_bytes(b.parse().map_err(|e| format!("EVENT_LOG_BYTES={b}: {e}"))?);
    }
    Ok(server)
}

/// Joins the cluster on `mysql_url` when `CLUSTER=1`, its runs' writes to `saver` fenced in their
/// transactions.
#[cfg(feature = "cluster")]
async fn cluster(
    server: Server,
    saver: MySqlCheckpointer,
    mysql_url: &str,
) -> std::result::Result<Server, Box<dyn std::error::Error>> {
    if std::env::var("CLUSTER").as_deref() != Ok("1") {
        return Ok(server);
    }
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned());
    let workers = std::env::var("CLUSTER_WORKERS").ok().and_then(|w| w.parse().ok());
    let cluster = mnemograph_server::cluster::Cluster::connect(mysql_url, &redis).await?.with_saver(saver);
    Ok(server.with_cluster(cluster.with_workers(workers.unwrap_or(mnemograph_server::cluster::WORKERS))))
}

#[cfg(not(feature = "cluster"))]
async fn cluster(
    server: Server,
    _: MySqlCheckpointer,
    _: &str,
) -> std::result::Result<Server, Box<dyn std::error::Error>> {
    if std::env::var("CLUSTER").as_deref() == Ok("1") {
        return Err("CLUSTER=1 needs the `cluster` feature (--features cluster)".into());
    }
    Ok(server)
}

/// The hosts and origins of `ALLOWED_HOSTS` and `CORS_ORIGINS`.
fn guarded(server: Server) -> Server {
    let list = |name: &str| -> Vec<String> {
        let value = std::env::var(name).unwrap_or_default();
        value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
    };
    let hosts = list("ALLOWED_HOSTS");
    let server =
        if hosts.iter().any(|h| h == "*") { server.allow_any_host() } else { server.allowed_hosts(hosts) };
    server.cors_origins(list("CORS_ORIGINS"))
}

/// The server on `DATABASE_URL` (when it names Postgres), on `SQLITE_PATH`, or in memory.
async fn local_or_postgres() -> std::result::Result<Server, Box<dyn std::error::Error>> {
    if let Some(url) = std::env::var("DATABASE_URL").ok().filter(|u| u.starts_with("postgres")) {
        let saver = mnemograph_checkpoint_postgres::PostgresCheckpointer::connect(&url).await?;
        saver.setup().await?;
        let store =
            mnemograph_checkpoint_postgres::PostgresStore::builder().from_pool(saver.pool().clone()).await?;
        return Ok(Server::new(saver).with_store(store));
    }
    match std::env::var("SQLITE_PATH") {
        Ok(path) => {
            let saver = mnemograph_checkpoint_sqlite::SqliteCheckpointer::connect(&path).await?;
            let store =
                mnemograph_checkpoint_sqlite::SqliteStore::builder().from_pool(saver.pool().clone()).await?;
            Ok(Server::new(saver).with_store(store))
        }
        Err(_) => Ok(Server::new(InMemoryCheckpointer::new())),
    }
}

const HELP: &str = "usage: serve [--no-auth] [ADDRESS]   (ADDRESS defaults to 127.0.0.1:2024)

Serves the graphs `chain`, `pause` and `talk` over LangGraph's API.

environment:
  AUTH_TOKENS    user:token,user:token  bearer tokens; each user owns what it creates
  ALLOWED_HOSTS  host[:port],...        hosts answered besides the loopback names (`*`: any)
  CORS_ORIGINS   origin,...             browser origins allowed to call the API
  MYSQL_URL      checkpoints in MySQL/MariaDB (CLUSTER=1 joins the cluster on it; REDIS_URL,
                 CLUSTER_WORKERS)
  REDIS_CHECKPOINTS_URL  checkpoints in Redis
  DATABASE_URL   postgres://…: checkpoints and store items in PostgreSQL
  SQLITE_PATH    checkpoints and store items in this SQLite file
  TALK_TOKENS    tokens per reply of `talk` (2000)
  RUN_RETENTION_SECS, EVENT_RETENTION_SECS, SWEEP_SECS
                 how long finished runs and their events stay, how often they are freed
  EVENT_LOG_BYTES  bytes of droppable events a run keeps for late readers (1048576)

--no-auth  serve an address other than loopback without AUTH_TOKENS: anyone who reaches the
           server reads and changes every thread";

/// Authenticates with the token table of `AUTH_TOKENS`, if set; serves without when told
/// `--no-auth`.
fn authenticated(server: Server, no_auth: bool) -> std::result::Result<Server, Box<dyn std::error::Error>> {
    let server = if no_auth { server.allow_unauthenticated() } else { server };
    match std::env::var("AUTH_TOKENS") {
        Ok(table) => Ok(server.with_auth(BearerTokens::parse(&table)?)),
        Err(_) => Ok(server),
    }
}

#[tokio::main]
async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{HELP}");
        return Ok(());
    }
    let no_auth = args.iter().any(|a| a == "--no-auth");
    let bind =
        args.iter().find(|a| !a.starts_with("--")).cloned().unwrap_or_else(|| "127.0.0.1:2024".to_owned());
    let chain =
        StateGraph::<Log>::new().add_node("a", a).add_node("b", b).add_edge(START, "a").add_edge("a", "b");
    let pause = StateGraph::<Log>::new().add_node("wait", wait).add_edge(START, "wait");
    let tokens: usize = match std::env::var("TALK_TOKENS") {
        Ok(n) => n.parse().map_err(|e| format!("TALK_TOKENS={n}: {e}"))?,
        Err(_) => 2000,
    };
    let talk = StateGraph::<MessagesState>::new()
        .add_node("talk", move |_: MessagesState, rt: Runtime| talk(rt, tokens))
        .add_edge(START, "talk");
    let server = match std::env::var("MYSQL_URL") {
        Ok(url) => {
            let saver = MySqlCheckpointer::connect(&url).await?;
            saver.setup().await?;
            cluster(Server::new(saver.clone()), saver, &url).await?
        }
        Err(_) => match std::env::var("REDIS_CHECKPOINTS_URL") {
            Ok(url) => Server::new(mnemograph_checkpoint_redis::RedisCheckpointer::connect(&url).await?),
            Err(_) => local_or_postgres().await?,
        },
    };
    let server = server
        .graph("chain", chain.compile()?)?
        .graph("pause", pause.compile()?)?
        .graph("talk", talk.compile()?)?;
    let server = authenticated(guarded(retained(server)?), no_auth)?;
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    println!("serving chain, pause and talk on http://{}", listener.local_addr()?);
    server.serve(listener).await?;
    Ok(())
}
