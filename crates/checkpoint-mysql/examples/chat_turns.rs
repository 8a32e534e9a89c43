//! The side-by-side chat benchmark of `../shared/bench/peer/lg_bench.py chat_mysql`: an echo agent
//! over `add_messages`, one thread, N turns, every checkpoint stored in MySQL before the next step
//! (durability `sync`). Prints one JSON line in the Python script's shape, so the two can be
//! compared from one run on one machine:
//!
//! ```sh
//! cargo run --release -p checkpoint-mysql --example chat_turns -- 200
//! $PY ../shared/bench/peer/lg_bench.py chat_mysql 200
//! ```
//!
//! `MYSQL_URL` names the server and database (default `mysql://root@127.0.0.1:3306/peer`, the
//! Python script's); the database must exist.

use std::time::Instant;

use checkpoint_mysql::MySqlCheckpointer;
use graph_core::prelude::*;
use sqlx::Row as _;

/// The Python script's `chat()`: `{"messages": [AIMessage("echo: " + last.content)]}`.
async fn agent(s: MessagesState) -> Result<MessagesStateUpdate> {
    let last = s.messages.last().map(Message::text).unwrap_or_default();
    Ok(MessagesStateUpdate::messages(vec![Message::ai(format!("echo: {last}"))]))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let turns: usize = std::env::args().nth(1).map_or(Ok(200), |n| n.parse())?;
    let url = std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/peer".into());
    let saver = MySqlCheckpointer::connect(&url).await?;
    saver.setup().await?;
    let pool = saver.pool().clone();
    let graph = StateGraph::<MessagesState>::new()
        .add_node("agent", agent)
        .add_edge(START, "agent")
        .add_edge("agent", END)
        .compile_with(saver)?;

    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_nanos();
    let thread = format!("bench-rs-{nanos}");
    let config = RunConfig::thread(&thread).durability(Durability::Sync);
    let mut per_turn = Vec::with_capacity(turns);
    let start = Instant::now();
    for i in 0..turns {
        let t = Instant::now();
        let input = MessagesStateUpdate::messages(vec![Message::human(format!("turn {i} 你好 hello"))]);
        graph.invoke(input, &config).await?;
        per_turn.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let total = start.elapsed().as_secs_f64();

    let blobs: i64 = sqlx::query(
        "SELECT CAST(COALESCE(SUM(LENGTH(`blob`)), 0) AS SIGNED) FROM checkpoint_blobs WHERE thread_id = ?",
    )
    .bind(&thread)
    .fetch_one(&pool)
    .await?
    .try_get(0)?;
    let row = sqlx::query(
        "SELECT CAST(COALESCE(SUM(LENGTH(checkpoint)), 0) AS SIGNED), COUNT(*) FROM checkpoints WHERE thread_id = ?",
    )
    .bind(&thread)
    .fetch_one(&pool)
    .await?;
    let (checkpoint_bytes, checkpoints): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
    let last_50 = &per_turn[turns.saturating_sub(50)..];
    let report = serde_json::json!({
        "workload": "chat_turns_mysql",
        "impl": "graph-rs",
        "turns": turns,
        "us_per_turn": total / turns as f64 * 1e6,
        "us_per_turn_last_50": last_50.iter().sum::<f64>() / last_50.len().max(1) as f64,
        "blob_bytes": blobs,
        "checkpoint_json_bytes": checkpoint_bytes,
        "checkpoints": checkpoints,
    });
    println!("{report}");
    Ok(())
}
