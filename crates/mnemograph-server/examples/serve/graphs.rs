//! The graphs the serve examples serve: `chain`, `pause` and `talk`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mnemograph_core::prelude::*;
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

/// `server` serving `chain`, `pause` and `talk` (`TALK_TOKENS` tokens per reply, 2000 by
/// default).
pub(crate) fn served(server: Server) -> std::result::Result<Server, Box<dyn std::error::Error>> {
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
    Ok(server
        .graph("chain", chain.compile()?)?
        .graph("pause", pause.compile()?)?
        .graph("talk", talk.compile()?)?)
}
