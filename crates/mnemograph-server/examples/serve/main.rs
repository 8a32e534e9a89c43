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
//! items too (otherwise the store is in memory). `mnemograph-server-cluster`'s `serve_cluster`
//! example serves the same graphs on a cluster of such processes.
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

mod graphs;
mod settings;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::prelude::*;
use mnemograph_server::Server;

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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
  MYSQL_URL      checkpoints in MySQL/MariaDB
  REDIS_CHECKPOINTS_URL  checkpoints in Redis
  DATABASE_URL   postgres://…: checkpoints and store items in PostgreSQL
  SQLITE_PATH    checkpoints and store items in this SQLite file
  TALK_TOKENS    tokens per reply of `talk` (2000)
  RUN_RETENTION_SECS, EVENT_RETENTION_SECS, SWEEP_SECS
                 how long finished runs and their events stay, how often they are freed
  EVENT_LOG_BYTES  bytes of droppable events a run keeps for late readers (1048576)

--no-auth  serve an address other than loopback without AUTH_TOKENS: anyone who reaches the
           server reads and changes every thread";

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
    let server = match std::env::var("MYSQL_URL") {
        Ok(url) => {
            let saver = MySqlCheckpointer::connect(&url).await?;
            saver.setup().await?;
            Server::new(saver)
        }
        Err(_) => match std::env::var("REDIS_CHECKPOINTS_URL") {
            Ok(url) => Server::new(mnemograph_checkpoint_redis::RedisCheckpointer::connect(&url).await?),
            Err(_) => local_or_postgres().await?,
        },
    };
    let server = settings::configured(graphs::served(server)?, no_auth)?;
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    println!("serving chain, pause and talk on http://{}", listener.local_addr()?);
    server.serve(listener).await?;
    Ok(())
}
