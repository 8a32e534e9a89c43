//! The MySQL chat benchmark, twin of `benches/python/lg_bench.py chat_mysql`: an echo agent over
//! `add_messages`, one thread, N turns, every checkpoint stored in MySQL before the next step
//! (durability `sync`, which the Python twin asks for too). Prints one JSON line in the Python
//! script's shape, so the two can be compared from one run on one machine (`scripts/bench.sh` runs
//! both, alternating):
//!
//! ```sh
//! cargo run --release -p mnemograph-checkpoint-mysql --example chat_turns -- 200
//! cargo run --release -p mnemograph-checkpoint-mysql --example chat_turns -- 200 --delta
//! $(bash scripts/python-peer.sh) benches/python/lg_bench.py chat_mysql 200
//! ```
//!
//! `us` (= `us_per_turn`) is the mean turn, the figure compared with Python's; `thread_bytes` what the
//! thread takes in the three tables (`tables` has them one by one).
//!
//! `--turns-only` stops after the turns and prints only their figures, so that the process's CPU
//! time (`/usr/bin/time`, `perf stat`) is the turns' alone.
//!
//! `--no-read-cache` makes every turn read its thread back from the server in full
//! (`with_read_cache(0)`), as a process that did not write the previous turn would.
//!
//! `--delta` stores `messages` in delta mode (`with_delta_channels(["messages"])`, a snapshot every
//! 32 versions; `--delta=N` for every N), which Python cannot read; the JSON line then also counts
//! the delta and snapshot rows.
//!
//! `--at=10,100,1000` reports, for each of those turns, what a turn costs at that point of a long
//! thread: the median time of the ten turns around it and the bytes that one turn added to the
//! three tables (`at` in the JSON line). The sizes are read between turns, outside the timings.
//!
//! `MYSQL_URL` names the server and database (default `mysql://root@127.0.0.1:3306/graph_bench_rs`);
//! the database is created when missing.

use std::time::Instant;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, Checkpointer as _, ListOptions};
use mnemograph_checkpoint_mysql::{DeltaChannels, MySqlCheckpointer};
use mnemograph_core::prelude::*;
use sqlx::Row as _;

/// The Python script's `chat()`: `{"messages": [AIMessage("echo: " + last.content)]}`.
async fn agent(s: MessagesState) -> Result<MessagesStateUpdate> {
    let last = s.messages.last().map(Message::text).unwrap_or_default();
    Ok(MessagesStateUpdate::messages(vec![Message::ai(format!("echo: {last}"))]))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let mut turns = 200;
    let mut delta = None;
    let mut read_cache = true;
    let mut turns_only = false;
    let mut at: Vec<usize> = Vec::new();
    for arg in std::env::args().skip(1) {
        if let Some(list) = arg.strip_prefix("--at=") {
            at = list.split(',').map(str::parse).collect::<std::result::Result<_, _>>()?;
            continue;
        }
        if arg == "--turns-only" {
            turns_only = true;
            continue;
        }
        if arg == "--no-read-cache" {
            read_cache = false;
            continue;
        }
        match arg.strip_prefix("--delta") {
            Some("") => delta = Some(DeltaChannels::DEFAULT_SNAPSHOT_EVERY),
            Some(every) => delta = Some(every.trim_start_matches('=').parse()?),
            None => turns = arg.parse()?,
        }
    }
    let url =
        std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_bench_rs".into());
    create_database(&url).await?;
    let mut saver = MySqlCheckpointer::connect(&url).await?;
    if let Some(every) = delta {
        saver = saver.with_delta(DeltaChannels::new(["messages"]).snapshot_every(every));
    }
    if !read_cache {
        saver = saver.with_read_cache(0);
    }
    saver.setup().await?;
    let pool = saver.pool().clone();
    let graph = StateGraph::<MessagesState>::new()
        .add_node("agent", agent)
        .add_edge(START, "agent")
        .add_edge("agent", END)
        .compile_with(saver.clone())?;

    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos();
    let thread = format!("bench-rs-{}{nanos}", if delta.is_some() { "delta-" } else { "" });
    let config = RunConfig::thread(&thread).durability(Durability::Sync);
    let mut per_turn = Vec::with_capacity(turns);
    // Turn number (1-based) → bytes that turn added; sized between turns, so outside the timings.
    let mut added = std::collections::BTreeMap::new();
    let mut untimed = std::time::Duration::ZERO;
    let start = Instant::now();
    for i in 0..turns {
        let sized = at.contains(&(i + 1));
        let t = Instant::now();
        let before = if sized { thread_bytes(&pool, &thread).await? } else { 0 };
        untimed += t.elapsed();
        let t = Instant::now();
        let input = MessagesStateUpdate::messages(vec![Message::human(format!("turn {i} 你好 hello"))]);
        graph.invoke(input, &config).await?;
        per_turn.push(t.elapsed().as_secs_f64() * 1e6);
        if sized {
            let t = Instant::now();
            added.insert(i + 1, thread_bytes(&pool, &thread).await? - before);
            untimed += t.elapsed();
        }
    }
    let total = (start.elapsed() - untimed).as_secs_f64();
    let at_points: Vec<serde_json::Value> = added
        .iter()
        .map(|(&turn, &bytes)| {
            // The ten turns around `turn` (1-based), clipped to the run.
            let window = &per_turn[turn.saturating_sub(5)..(turn + 5).min(turns)];
            let mut w = window.to_vec();
            w.sort_by(f64::total_cmp);
            serde_json::json!({ "turn": turn, "us_median": w[w.len() / 2], "bytes_added": bytes })
        })
        .collect();
    let mut sorted = per_turn.clone();
    sorted.sort_by(f64::total_cmp);
    // The median turn too: one slow fsync of the server's disk moves the mean of a short run
    // by more than most changes to the client do.
    let median = sorted.get(sorted.len() / 2).copied().unwrap_or_default();
    let last_50 = &per_turn[turns.saturating_sub(50)..];
    let us_per_turn_last_50 = last_50.iter().sum::<f64>() / last_50.len().max(1) as f64;
    let us_per_turn = total / turns as f64 * 1e6;
    let mut report = serde_json::json!({
        "workload": if delta.is_some() { "chat_mysql_delta" } else { "chat_mysql" },
        "impl": "rust",
        "per": "turn",
        "us": us_per_turn,
        "turns": turns,
        "us_per_turn": us_per_turn,
        "us_per_turn_median": median,
        "us_per_turn_last_50": us_per_turn_last_50,
        "at": at_points,
    });
    if turns_only {
        println!("{report}");
        return Ok(());
    }

    // Reading the thread back: its latest checkpoint (what every turn starts with) and its whole
    // history, through a saver with an empty cache, as another process would.
    let reader = MySqlCheckpointer::from_pool(pool.clone());
    let latest = CheckpointConfig::thread(&thread);
    let reads = 50;
    let t = Instant::now();
    for _ in 0..reads {
        reader.get_tuple(&latest).await?;
    }
    let us_get_latest = t.elapsed().as_secs_f64() * 1e6 / f64::from(reads);
    let t = Instant::now();
    let history = reader.list(Some(&latest), ListOptions::new()).await?;
    let ms_list_all = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(history.len(), 3 * turns);

    // What the thread takes in each table, summed the same way as the Python twin does.
    let mut tables = serde_json::Map::new();
    let mut thread_bytes = 0;
    for (table, column) in
        [("checkpoints", "checkpoint"), ("checkpoint_blobs", "`blob`"), ("checkpoint_writes", "`blob`")]
    {
        let row = sqlx::query(&format!(
            "SELECT CAST(COALESCE(SUM(LENGTH({column})), 0) AS SIGNED), COUNT(*) \
             FROM {table} WHERE thread_id = ?"
        ))
        .bind(&thread)
        .fetch_one(&pool)
        .await?;
        let (bytes, rows): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        thread_bytes += bytes;
        tables.insert(table.into(), serde_json::json!({"bytes": bytes, "rows": rows}));
    }
    let kinds: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT type, COUNT(*), CAST(SUM(LENGTH(`blob`)) AS SIGNED) FROM checkpoint_blobs \
         WHERE thread_id = ? GROUP BY type ORDER BY type",
    )
    .bind(&thread)
    .fetch_all(&pool)
    .await?;
    let blob_rows: serde_json::Map<String, serde_json::Value> = kinds
        .into_iter()
        .map(|(kind, n, bytes)| (kind, serde_json::json!({"rows": n, "bytes": bytes})))
        .collect();

    let figures = serde_json::json!({
        "us_get_latest": us_get_latest,
        "ms_list_all": ms_list_all,
        "thread_bytes": thread_bytes,
        "tables": tables,
        "delta_snapshot_every": delta,
        "read_cache": read_cache,
        "blob_rows_by_type": blob_rows,
    });
    if let (Some(report), serde_json::Value::Object(figures)) = (report.as_object_mut(), figures) {
        report.extend(figures);
    }
    println!("{report}");
    Ok(())
}

/// What `thread` takes in the three tables, in bytes.
async fn thread_bytes(pool: &sqlx::MySqlPool, thread: &str) -> std::result::Result<i64, sqlx::Error> {
    let row = sqlx::query(
        "SELECT (SELECT CAST(COALESCE(SUM(LENGTH(checkpoint)), 0) AS SIGNED) FROM checkpoints WHERE thread_id = ?) \
              + (SELECT CAST(COALESCE(SUM(LENGTH(`blob`)), 0) AS SIGNED) FROM checkpoint_blobs WHERE thread_id = ?) \
              + (SELECT CAST(COALESCE(SUM(LENGTH(`blob`)), 0) AS SIGNED) FROM checkpoint_writes WHERE thread_id = ?)",
    )
    .bind(thread)
    .bind(thread)
    .bind(thread)
    .fetch_one(pool)
    .await?;
    row.try_get::<i64, _>(0)
}

/// Creates the database named in `url` when it does not exist yet.
async fn create_database(url: &str) -> std::result::Result<(), Box<dyn std::error::Error>> {
    use sqlx::{ConnectOptions as _, Connection as _};
    let options: mnemograph_checkpoint_mysql::MySqlConnectOptions = url.parse()?;
    let Some(db) = options.get_database().map(str::to_owned) else { return Ok(()) };
    let mut conn = options.database("information_schema").connect().await?;
    let create = format!("CREATE DATABASE IF NOT EXISTS `{}` CHARACTER SET utf8mb4", db.replace('`', "``"));
    sqlx::raw_sql(&create).execute(&mut conn).await?;
    conn.close().await?;
    Ok(())
}
