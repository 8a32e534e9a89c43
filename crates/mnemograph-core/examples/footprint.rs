//! Resident memory of live threads in the in-memory saver: THREADS threads of TURNS echo-chat
//! turns each (the `chat` graph of the engine benches: START → agent → END, the agent answering
//! "echo: " + the last message), and the process's resident memory (VmRSS) before and after.
//! Prints one JSON line; `benches/python/lg_bench.py footprint` is the Python twin.
//!
//! `cargo run --release -p mnemograph-core --example footprint -- [THREADS] [TURNS]`
//! (defaults 10000 and 10)

use mnemograph_core::messages::{Message, MessagesState, MessagesStateUpdate};
use mnemograph_core::prelude::*;

async fn agent(s: MessagesState) -> Result<MessagesStateUpdate> {
    let last = s.messages.last().map(Message::text).unwrap_or_default();
    Ok(MessagesStateUpdate::messages(vec![Message::ai(format!("echo: {last}"))]))
}

fn human(i: usize) -> MessagesStateUpdate {
    MessagesStateUpdate::messages(vec![Message::human(format!("turn {i} 你好 hello"))])
}

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).expect("VmRSS in kB") * 1024
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().expect("a number"));
    let (threads, turns) = (args.next().unwrap_or(10_000), args.next().unwrap_or(10));
    let graph = StateGraph::<MessagesState>::new()
        .add_node("agent", agent)
        .add_edge(START, "agent")
        .add_edge("agent", END)
        .compile_with(InMemoryCheckpointer::new())?;
    // One thread first, so that what the first run allocates once is not counted per thread.
    for i in 0..turns {
        graph.invoke(human(i), &RunConfig::thread("warm-up")).await?;
    }
    let before = rss_bytes();
    for t in 0..threads {
        let config = RunConfig::thread(format!("t{t}"));
        for i in 0..turns {
            graph.invoke(human(i), &config).await?;
        }
    }
    let after = rss_bytes();
    println!(
        "{}",
        serde_json::json!({
            "workload": "footprint",
            "impl": "rust",
            "threads": threads,
            "turns": turns,
            "rss_before": before,
            "rss_after": after,
            "bytes_per_thread": (after - before) as f64 / threads as f64,
        })
    );
    Ok(())
}
