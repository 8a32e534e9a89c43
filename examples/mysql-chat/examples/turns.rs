//! Drives one conversation for many rounds through [`ChatService`] with the offline model and
//! prints what its thread occupies in the checkpoint tables along the way: rows and bytes stay
//! flat once the trimming budget is reached, as the README shows.
//!
//! ```sh
//! MYSQL_URL=mysql://root@127.0.0.1:3306/graph_test cargo run -p mysql-chat --example turns -- 1000
//! ```
//!
//! `CHAT_CONTEXT_TOKENS` and `CHAT_KEEP_CHECKPOINTS` apply as for the service.

use std::time::Instant;

use mnemograph_models::ChatModelExt;
use mysql_chat::{ChatInput, ChatService, Config, OfflineModel};

// Shared with the tests, where it is reached through `support`.
#[allow(unreachable_pub)]
#[path = "../tests/support/turns.rs"]
mod turns;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let total: usize = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(1000);
    let config = Config::from_env()?;
    let service = ChatService::connect(&config, OfflineModel.shared()).await?;
    let id = uuid::Uuid::new_v4().to_string();
    println!(
        "conversation {id}: {total} rounds, CHAT_CONTEXT_TOKENS={}, CHAT_KEEP_CHECKPOINTS={}",
        config.context_tokens, config.keep_checkpoints
    );
    println!(
        "| round | checkpoints | blobs | writes | thread bytes | latest `messages` blob | ms per round |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut stretch = Instant::now();
    let mut stretch_start = 0;
    for turn in 1..=total {
        service.chat(ChatInput::new(Some(id.clone()), turns::message(turn))).await?;
        if [1, 10, 100, 300].contains(&turn) || turn % 1000 == 0 || turn == total {
            let per_round = stretch.elapsed().as_secs_f64() * 1000.0 / (turn - stretch_start) as f64;
            let f = service.footprint(&id).await?;
            println!(
                "| {turn} | {} | {} | {} | {} | {} | {per_round:.1} |",
                f.checkpoints, f.blobs, f.writes, f.bytes, f.latest_messages_bytes
            );
            stretch = Instant::now();
            stretch_start = turn;
        }
    }
    Ok(())
}
