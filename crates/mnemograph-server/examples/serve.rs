//! Serves two small graphs over LangGraph's API, for trying the server with an SDK client and for
//! the load benchmark (`scripts/bench-server.sh`): `chain` (two nodes appending to a log) and
//! `pause` (one node that waits 50 ms, as a model call would).
//!
//! Threads are checkpointed in memory, in MySQL/MariaDB when `MYSQL_URL` is set, or in Redis
//! when `REDIS_CHECKPOINTS_URL` is set (`redis://host:port/`). With
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
//! `cargo run -p mnemograph-server --example serve -- [--no-auth] [ADDRESS (127.0.0.1:2024)]`

use std::time::Duration;

use mnemograph_core::prelude::*;
use mnemograph_server::auth::BearerTokens;
use mnemograph_server::Server;

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

/// Joins the cluster on `mysql_url` when `CLUSTER=1`.
#[cfg(feature = "cluster")]
async fn cluster(server: Server, mysql_url: &str) -> std::result::Result<Server, Box<dyn std::error::Error>> {
    if std::env::var("CLUSTER").as_deref() != Ok("1") {
        return Ok(server);
    }
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned());
    let workers = std::env::var("CLUSTER_WORKERS").ok().and_then(|w| w.parse().ok());
    let cluster = mnemograph_server::cluster::Cluster::connect(mysql_url, &redis).await?;
    Ok(server.with_cluster(cluster.with_workers(workers.unwrap_or(mnemograph_server::cluster::WORKERS))))
}

#[cfg(not(feature = "cluster"))]
async fn cluster(server: Server, _: &str) -> std::result::Result<Server, Box<dyn std::error::Error>> {
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

const HELP: &str = "usage: serve [--no-auth] [ADDRESS]   (ADDRESS defaults to 127.0.0.1:2024)

Serves the graphs `chain` and `pause` over LangGraph's API.

environment:
  AUTH_TOKENS    user:token,user:token  bearer tokens; each user owns what it creates
  ALLOWED_HOSTS  host[:port],...        hosts answered besides the loopback names (`*`: any)
  CORS_ORIGINS   origin,...             browser origins allowed to call the API
  MYSQL_URL      checkpoints in MySQL/MariaDB (CLUSTER=1 joins the cluster on it; REDIS_URL,
                 CLUSTER_WORKERS)
  REDIS_CHECKPOINTS_URL  checkpoints in Redis

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
    let server = match std::env::var("MYSQL_URL") {
        Ok(url) => {
            let saver = mnemograph_checkpoint_mysql::MySqlCheckpointer::connect(&url).await?;
            saver.setup().await?;
            cluster(Server::new(saver), &url).await?
        }
        Err(_) => match std::env::var("REDIS_CHECKPOINTS_URL") {
            Ok(url) => Server::new(mnemograph_checkpoint_redis::RedisCheckpointer::connect(&url).await?),
            Err(_) => Server::new(InMemoryCheckpointer::new()),
        },
    };
    let server = server.graph("chain", chain.compile()?)?.graph("pause", pause.compile()?)?;
    let server = authenticated(guarded(server), no_auth)?;
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    println!("serving chain and pause on http://{}", listener.local_addr()?);
    server.serve(listener).await?;
    Ok(())
}
