//! The Postgres chat benchmark, twin of `benches/python/pg_bench.py`: an echo agent over
//! `add_messages`, every checkpoint stored before the next step (durability `sync`, which the
//! Python twin asks for too). Prints one JSON line per run in the Python script's shape, so that
//! `scripts/bench-postgres.sh` can set the two side by side:
//!
//! ```sh
//! cargo run --release -p mnemograph-checkpoint-postgres --example postgres_turns -- chat 200
//! cargo run --release -p mnemograph-checkpoint-postgres --example postgres_turns -- concurrent 64 10
//! cargo run --release -p mnemograph-checkpoint-postgres --example postgres_turns -- commit 200
//! ```
//!
//! - `chat N`: one thread, N turns one after another; `us` is the mean turn, `us_median` the
//!   median, `thread_bytes` what the thread takes in the three tables.
//! - `concurrent C T`: C threads at once, T turns each, one task per thread on the multi-thread
//!   runtime, the saver's pool of 10 connections; `turns_per_s` is all C × T turns over the wall
//!   time. Every thread must then hold its 2 × T messages.
//! - `commit N`: the server's reference, N single-row INSERTs in autocommit mode (one durable
//!   commit each); `us_median` is one commit.
//!
//! `DATABASE_URL` names the server and database (default
//! `postgres://postgres@127.0.0.1:5432/graph_bench_pg_rs`); the database is created when missing.

use std::time::Instant;

use mnemograph_checkpoint_postgres::{PgConnectOptions, PostgresCheckpointer};
use mnemograph_core::prelude::*;
use sqlx::{ConnectOptions as _, Connection as _};

type Failure = Box<dyn std::error::Error + Send + Sync>;

/// The Python script's `chat()`: `{"messages": [AIMessage("echo: " + last.content)]}`.
async fn agent(s: MessagesState) -> Result<MessagesStateUpdate> {
    let last = s.messages.last().map(Message::text).unwrap_or_default();
    Ok(MessagesStateUpdate::messages(vec![Message::ai(format!("echo: {last}"))]))
}

fn human(i: usize) -> MessagesStateUpdate {
    MessagesStateUpdate::messages(vec![Message::human(format!("turn {i} 你好 hello"))])
}

fn graph(saver: PostgresCheckpointer) -> Result<CompiledGraph<MessagesState>> {
    StateGraph::<MessagesState>::new()
        .add_node("agent", agent)
        .add_edge(START, "agent")
        .add_edge("agent", END)
        .compile_with(saver)
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn percentile(samples: &[f64], p: f64) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted.get(rank).copied().unwrap_or_default()
}

fn stamp() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

#[tokio::main]
async fn main() -> std::result::Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: usize| args.get(i).map_or(Ok(default), |a| a.parse::<usize>());
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/graph_bench_pg_rs".into());
    create_database(&url).await?;
    let line = match args.first().map(String::as_str) {
        Some("chat") => chat(&url, number(1, 200)?).await?,
        Some("concurrent") => concurrent(&url, number(1, 8)?, number(2, 10)?).await?,
        Some("commit") => commit(&url, number(1, 200)?).await?,
        _ => return Err("usage: postgres_turns chat N | concurrent C T | commit N".into()),
    };
    println!("{line}");
    Ok(())
}

/// One thread, `turns` turns.
async fn chat(url: &str, turns: usize) -> std::result::Result<serde_json::Value, Failure> {
    let saver = PostgresCheckpointer::connect(url).await?;
    saver.setup().await?;
    let pool = saver.pool().clone();
    let graph = graph(saver)?;
    let thread = format!("bench-pg-rs-{}", stamp());
    let config = RunConfig::thread(&thread).durability(Durability::Sync);
    let mut per_turn = Vec::with_capacity(turns);
    let start = Instant::now();
    for i in 0..turns {
        let t = Instant::now();
        graph.invoke(human(i), &config).await?;
        per_turn.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let total = start.elapsed().as_secs_f64();
    let bytes: i64 = sqlx::query_scalar(
        "SELECT (SELECT COALESCE(sum(pg_column_size(checkpoint)), 0) FROM checkpoints WHERE thread_id = $1)
              + (SELECT COALESCE(sum(length(blob)), 0) FROM checkpoint_blobs WHERE thread_id = $1)
              + (SELECT COALESCE(sum(length(blob)), 0) FROM checkpoint_writes WHERE thread_id = $1)",
    )
    .bind(&thread)
    .fetch_one(&pool)
    .await?;
    let messages = graph.get_state(&RunConfig::thread(&thread)).await?.values.messages.len();
    assert_eq!(messages, 2 * turns, "the thread holds every message");
    Ok(serde_json::json!({
        "workload": "chat_postgres",
        "impl": "rust",
        "per": "turn",
        "turns": turns,
        "us": total / turns as f64 * 1e6,
        "us_median": median(&mut per_turn.clone()),
        "p99_ms": percentile(&per_turn, 99.0) / 1e3,
        "thread_bytes": bytes,
    }))
}

/// `concurrency` threads at once, `turns` turns each.
async fn concurrent(
    url: &str,
    concurrency: usize,
    turns: usize,
) -> std::result::Result<serde_json::Value, Failure> {
    let saver = PostgresCheckpointer::connect(url).await?;
    saver.setup().await?;
    let graph = std::sync::Arc::new(graph(saver)?);
    let run = stamp();
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(concurrency);
    for k in 0..concurrency {
        let graph = std::sync::Arc::clone(&graph);
        tasks.push(tokio::spawn(async move {
            let config =
                RunConfig::thread(format!("bench-conc-pg-rs-{run}-{k}")).durability(Durability::Sync);
            let mut times = Vec::with_capacity(turns);
            for i in 0..turns {
                let t = Instant::now();
                graph.invoke(human(i), &config).await?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            Ok::<_, mnemograph_core::Error>(times)
        }));
    }
    let mut samples = Vec::with_capacity(concurrency * turns);
    for task in tasks {
        samples.extend(task.await??);
    }
    let seconds = started.elapsed().as_secs_f64();
    for k in 0..concurrency {
        let config = RunConfig::thread(format!("bench-conc-pg-rs-{run}-{k}"));
        let n = graph.get_state(&config).await?.values.messages.len();
        assert_eq!(n, 2 * turns, "thread {k} holds {n} messages");
    }
    Ok(serde_json::json!({
        "workload": "concurrent/postgres",
        "impl": "rust",
        "concurrency": concurrency,
        "turns": samples.len(),
        "seconds": seconds,
        "turns_per_s": samples.len() as f64 / seconds,
        "p50_ms": percentile(&samples, 50.0),
        "p99_ms": percentile(&samples, 99.0),
    }))
}

/// `n` durable single-row commits, one after another.
async fn commit(url: &str, n: usize) -> std::result::Result<serde_json::Value, Failure> {
    let mut conn = url.parse::<PgConnectOptions>()?.connect().await?;
    sqlx::raw_sql("CREATE TABLE IF NOT EXISTS bench_commit (id BIGSERIAL PRIMARY KEY, v TEXT)")
        .execute(&mut conn)
        .await?;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        sqlx::query("INSERT INTO bench_commit (v) VALUES ($1)")
            .bind(i.to_string())
            .execute(&mut conn)
            .await?;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    sqlx::raw_sql("DROP TABLE bench_commit").execute(&mut conn).await?;
    conn.close().await?;
    Ok(
        serde_json::json!({"workload": "postgres_commit", "impl": "server", "us_median": median(&mut samples)}),
    )
}

/// Creates the database named in `url` when it does not exist yet.
async fn create_database(url: &str) -> std::result::Result<(), Failure> {
    let options = url.parse::<PgConnectOptions>()?;
    let Some(db) = options.get_database().map(str::to_owned) else { return Ok(()) };
    let mut conn = options.database("postgres").connect().await?;
    let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
        .bind(&db)
        .fetch_one(&mut conn)
        .await?;
    if !exists {
        sqlx::raw_sql(&format!("CREATE DATABASE \"{}\"", db.replace('"', "\"\""))).execute(&mut conn).await?;
    }
    conn.close().await?;
    Ok(())
}
