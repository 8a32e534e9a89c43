//! Many conversations at once: C threads, each running T chat turns one after another, all C at
//! the same time, on one saver; twin of `benches/python/lg_bench.py concurrent`. Prints one JSON
//! line (`scripts/bench-scale.sh` runs both sides and builds the table):
//!
//! ```sh
//! cargo run --release -p reliability --example concurrent_turns -- mysql 64 10
//! cargo run --release -p reliability --example concurrent_turns -- redis 64 10
//! cargo run --release -p reliability --example concurrent_turns -- memory 64 10
//! cargo run --release -p reliability --example concurrent_turns -- mysql_commit 64 50
//! ```
//!
//! The graph is `chat_turns`'s echo agent (START → agent → END over `add_messages`), every turn
//! with durability `sync`, so on MySQL and Redis each checkpoint is stored before the next step
//! runs. Thread `k` sends `turn {i} 你好 hello` at its turn `i`. The runtime is tokio's
//! multi-thread one with a worker per core, as a server would run it.
//!
//! The figures: `turns_per_s` is all C × T turns over the wall time from the first turn's start to
//! the last one's end; `p50_ms` and `p99_ms` are single turns' latencies; `client_cpu_s` is the
//! CPU time this process spent in that span, on every thread. After the timing every
//! thread's state is read back and must hold exactly its 2 × T messages.
//!
//! `mysql_commit C N` is the server's own reference, no graph: C connections each run N
//! single-row INSERTs in autocommit mode into a scratch table at once, i.e. durable commits from
//! C sessions, which the server may group into fewer log flushes; `turns_per_s` is then commits
//! per second.
//!
//! On MySQL the line also holds what the server counted during the timed run (`SHOW GLOBAL
//! STATUS`, so anything else on the server is counted too): `statements` (`Questions`),
//! `commits` (`Com_commit`) and `log_writes` (`Innodb_log_writes`), per turn.
//!
//! Servers: `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_bench_rs`; the database is
//! created when missing, and the URL's parameters set the saver's pool, e.g.
//! `?max-connections=64`) and `REDIS_URL` (default `redis://127.0.0.1:6379/`; the run's threads
//! are deleted afterwards).

use std::str::FromStr as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlConnectOptions};
use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_core::checkpoint::backend::uuid6;
use mnemograph_core::checkpoint::{DynCheckpointer, InMemoryCheckpointer};
use mnemograph_core::messages::{Message, MessagesState, MessagesStateUpdate};
use mnemograph_core::{CompiledGraph, Durability, Result, RunConfig, StateGraph, END, START};
use reliability::stats::Latencies;
use sqlx::{ConnectOptions as _, Connection as _, MySqlConnection};
use tokio::task::JoinSet;

type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The Python twin's `agent`: `{"messages": [AIMessage("echo: " + last.content)]}`.
async fn agent(s: MessagesState) -> Result<MessagesStateUpdate> {
    let last = s.messages.last().map(Message::text).unwrap_or_default();
    Ok(MessagesStateUpdate::messages(vec![Message::ai(format!("echo: {last}"))]))
}

fn graph(saver: Arc<dyn DynCheckpointer>) -> Fallible<CompiledGraph<MessagesState>> {
    let graph = StateGraph::<MessagesState>::new()
        .add_node("agent", agent)
        .add_edge(START, "agent")
        .add_edge("agent", END)
        .compile()?;
    Ok(graph.with_shared_checkpointer(saver))
}

#[tokio::main]
async fn main() -> Fallible<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [backend, concurrency, turns] = args.as_slice() else {
        return Err("usage: concurrent_turns memory|mysql|redis|mysql_commit CONCURRENCY TURNS".into());
    };
    let (concurrency, turns): (usize, usize) = (concurrency.parse()?, turns.parse()?);
    let mysql_url =
        std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_bench_rs".into());
    let redis_url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());

    if backend == "mysql_commit" {
        return commits(&mysql_url, concurrency, turns).await;
    }
    let saver: Arc<dyn DynCheckpointer> = match backend.as_str() {
        "memory" => Arc::new(InMemoryCheckpointer::new()),
        "mysql" => {
            create_database(&mysql_url).await?;
            let saver = MySqlCheckpointer::connect(&mysql_url).await?;
            saver.setup().await?;
            Arc::new(saver)
        }
        "redis" => Arc::new(RedisCheckpointer::connect(&redis_url).await?),
        other => return Err(format!("unknown backend {other:?}").into()),
    };
    let graph = graph(Arc::clone(&saver))?;
    let run = uuid6(0);
    let ids: Vec<String> = (0..concurrency).map(|k| format!("bench-conc-{run}-{k}")).collect();

    let before = server_status(backend, &mysql_url).await?;
    let cpu_before = cpu_seconds()?;
    let started = Instant::now();
    let mut workers = JoinSet::new();
    for id in ids.clone() {
        let graph = graph.clone();
        workers.spawn(async move {
            let config = RunConfig::thread(id).durability(Durability::Sync);
            let mut latencies = Latencies::new();
            for i in 0..turns {
                let input =
                    MessagesStateUpdate::messages(vec![Message::human(format!("turn {i} 你好 hello"))]);
                let begun = Instant::now();
                graph.invoke(input, &config).await?;
                latencies.push(begun.elapsed());
            }
            Ok::<_, mnemograph_core::Error>(latencies)
        });
    }
    let mut latencies = Latencies::new();
    while let Some(joined) = workers.join_next().await {
        latencies.extend(joined??);
    }
    let seconds = started.elapsed().as_secs_f64();
    let client_cpu = cpu_seconds()? - cpu_before;
    let after = server_status(backend, &mysql_url).await?;

    for id in &ids {
        let state = graph.get_state(&RunConfig::thread(id.clone())).await?;
        let n = state.values.messages.len();
        if n != 2 * turns {
            return Err(format!("thread {id} holds {n} messages, not {}", 2 * turns).into());
        }
    }
    if backend == "redis" {
        for id in &ids {
            saver.delete_thread(id).await?;
        }
    }

    let total = latencies.len();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut line = format!(
        "{{\"workload\": \"concurrent/{backend}\", \"impl\": \"rust\", \"backend\": \"{backend}\", \
         \"concurrency\": {concurrency}, \"turns\": {total}, \"seconds\": {seconds:.4}, \
         \"turns_per_s\": {:.2}, \"p50_ms\": {:.3}, \"p99_ms\": {:.3}, \"client_cpu_s\": {client_cpu:.2}",
        total as f64 / seconds,
        ms(latencies.percentile(50.0)),
        ms(latencies.percentile(99.0)),
    );
    if let (Some(before), Some(after)) = (before, after) {
        let per_turn = |i: usize| (after[i] - before[i]) as f64 / total as f64;
        line += &format!(
            ", \"statements_per_turn\": {:.2}, \"commits_per_turn\": {:.2}, \"log_writes_per_turn\": {:.3}",
            per_turn(0),
            per_turn(1),
            per_turn(2)
        );
    }
    println!("{line}}}");
    Ok(())
}

/// `Questions`, `Com_commit` and `Innodb_log_writes` of the MySQL server, for the `mysql`
/// backend only.
async fn server_status(backend: &str, url: &str) -> Fallible<Option<[i64; 3]>> {
    if backend != "mysql" {
        return Ok(None);
    }
    let mut conn = MySqlConnection::connect_with(&MySqlConnectOptions::from_str(url)?).await?;
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Com_commit', 'Innodb_log_writes')",
    )
    .fetch_all(&mut conn)
    .await?;
    conn.close().await?;
    let get = |name: &str| -> Fallible<i64> {
        let (_, value) = rows.iter().find(|(n, _)| n == name).ok_or(format!("no {name} in SHOW STATUS"))?;
        Ok(value.parse()?)
    };
    Ok(Some([get("Questions")?, get("Com_commit")?, get("Innodb_log_writes")?]))
}

/// The server's reference: `concurrency` sessions, each running `per_session` single-row INSERTs
/// in autocommit mode, all at once.
async fn commits(url: &str, concurrency: usize, per_session: usize) -> Fallible<()> {
    create_database(url).await?;
    let options = MySqlConnectOptions::from_str(url)?;
    let mut admin = MySqlConnection::connect_with(&options).await?;
    sqlx::raw_sql(
        "CREATE TABLE IF NOT EXISTS bench_commit_conc (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(16))",
    )
    .execute(&mut admin)
    .await?;
    // Every session is open before the clock starts: connecting is not committing.
    let mut sessions = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        sessions.push(MySqlConnection::connect_with(&options).await?);
    }
    let cpu_before = cpu_seconds()?;
    let started = Instant::now();
    let mut workers = JoinSet::new();
    for mut conn in sessions {
        workers.spawn(async move {
            let mut latencies = Latencies::new();
            for _ in 0..per_session {
                let begun = Instant::now();
                sqlx::query("INSERT INTO bench_commit_conc (v) VALUES ('x')").execute(&mut conn).await?;
                latencies.push(begun.elapsed());
            }
            conn.close().await?;
            Ok::<_, sqlx::Error>(latencies)
        });
    }
    let mut latencies = Latencies::new();
    while let Some(joined) = workers.join_next().await {
        latencies.extend(joined??);
    }
    let seconds = started.elapsed().as_secs_f64();
    let client_cpu = cpu_seconds()? - cpu_before;
    sqlx::raw_sql("DROP TABLE bench_commit_conc").execute(&mut admin).await?;
    admin.close().await?;
    let total = latencies.len();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{{\"workload\": \"concurrent/mysql_commit\", \"impl\": \"reference\", \"backend\": \"mysql_commit\", \
         \"concurrency\": {concurrency}, \"turns\": {total}, \"seconds\": {seconds:.4}, \
         \"turns_per_s\": {:.2}, \"p50_ms\": {:.3}, \"p99_ms\": {:.3}, \"client_cpu_s\": {client_cpu:.2}}}",
        total as f64 / seconds,
        ms(latencies.percentile(50.0)),
        ms(latencies.percentile(99.0)),
    );
    Ok(())
}

/// The CPU time this process has used so far, user and system, from `/proc/self/stat` (in the
/// kernel's `USER_HZ` ticks of 10 ms).
fn cpu_seconds() -> Fallible<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // The fields after the command name, which is in parentheses and may hold spaces.
    let rest = stat.rsplit_once(')').ok_or("malformed /proc/self/stat")?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks =
        |i: usize| -> Fallible<f64> { Ok(fields.get(i).ok_or("short /proc/self/stat")?.parse::<f64>()?) };
    // utime and stime are the 14th and 15th fields; `rest` starts at the 3rd.
    Ok((ticks(11)? + ticks(12)?) / 100.0)
}

/// Creates the database named in `url` when it does not exist yet.
async fn create_database(url: &str) -> Fallible<()> {
    let options = MySqlConnectOptions::from_str(url)?;
    let Some(db) = options.get_database().map(str::to_owned) else { return Ok(()) };
    let mut conn = options.database("information_schema").connect().await?;
    let create = format!("CREATE DATABASE IF NOT EXISTS `{}` CHARACTER SET utf8mb4", db.replace('`', "``"));
    sqlx::raw_sql(&create).execute(&mut conn).await?;
    conn.close().await?;
    Ok(())
}
