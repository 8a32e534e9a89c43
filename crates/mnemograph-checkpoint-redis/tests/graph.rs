//! Graphs from mnemograph-core running on the Redis saver: a chat thread that survives a new saver
//! (a process restart), a breakpoint resumed from Redis, shallow mode under a real run, and 100
//! threads talking at once. Needs a Redis server (see `support`); skips without one outside CI.

mod support;

use std::future::ready;
use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint::checkpoint::{DynCheckpointer, ListOptions};
use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_core::prelude::*;
use mnemograph_core::Breakpoint;
use support::{saver_with, thread};

/// START → agent → END; the agent answers `echo: <last message>` (the benches' chat graph).
fn chat() -> StateGraph<MessagesState> {
    StateGraph::<MessagesState>::new()
        .add_node("agent", |s: MessagesState| {
            let last = s.messages.last().map(Message::text).unwrap_or_default();
            ready(Ok::<_, Error>(MessagesStateUpdate::messages(vec![Message::ai(format!("echo: {last}"))])))
        })
        .add_edge(START, "agent")
        .add_edge("agent", END)
}

fn human(text: &str) -> MessagesStateUpdate {
    MessagesStateUpdate::messages(vec![Message::human(text)])
}

fn texts(state: &MessagesState) -> Vec<String> {
    state.messages.iter().map(Message::text).collect()
}

macro_rules! saver_or_skip {
    ($builder:expr) => {
        match saver_with($builder).await {
            Some(saver) => saver,
            None => return,
        }
    };
}

fn builder() -> mnemograph_checkpoint_redis::RedisCheckpointerBuilder {
    RedisCheckpointer::builder().key_prefix("graph-test:graph").ttl(Duration::from_secs(600))
}

#[tokio::test]
async fn a_chat_thread_continues_on_a_new_saver() {
    let saver = saver_or_skip!(builder());
    let g = chat().compile_with(saver.clone()).unwrap();
    let cfg = RunConfig::thread(thread("chat"));
    g.invoke(human("你好"), &cfg).await.unwrap();
    let out = g.invoke(human("again"), &cfg).await.unwrap();
    assert_eq!(texts(&out), ["你好", "echo: 你好", "again", "echo: again"]);

    // Another saver on the same server, as after a restart, sees the same thread.
    let fresh = saver_or_skip!(builder());
    let g2 = chat().compile_with(fresh).unwrap();
    let state = g2.get_state(&cfg).await.unwrap();
    assert_eq!(texts(&state.values), texts(&out));
    let ids: Vec<_> = state.values.messages.iter().map(|m| m.id().map(str::to_owned)).collect();
    assert!(ids.iter().all(Option::is_some), "message ids survive: {ids:?}");
    let history = g2.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    assert_eq!(history.len(), 6, "input, loop 0, loop 1 per turn");
    let out = g2.invoke(human("third"), &cfg).await.unwrap();
    assert_eq!(out.messages.len(), 6);
    Checkpointer::delete_thread(&saver, cfg.thread_id.as_deref().unwrap()).await.unwrap();
    assert!(g.get_state(&cfg).await.unwrap().values.messages.is_empty());
}

#[tokio::test]
async fn a_breakpoint_resumes_from_redis() {
    let saver = saver_or_skip!(builder());
    let g = chat().interrupt_before(["agent"]).compile_with(saver).unwrap();
    let cfg = RunConfig::thread(thread("breakpoint"));
    let out = g.invoke(human("wait"), &cfg).await.unwrap();
    assert_eq!(out.breakpoint, Some(Breakpoint::Before(vec!["agent".into()])));
    assert_eq!(g.get_state(&cfg).await.unwrap().next, ["agent"]);
    let out = g.resume(&cfg).await.unwrap();
    assert_eq!(texts(&out.state), ["wait", "echo: wait"]);
}

#[tokio::test]
async fn shallow_mode_runs_a_chat_keeping_one_checkpoint() {
    let saver = saver_or_skip!(builder().shallow(true));
    let g = chat().compile_with(saver.clone()).unwrap();
    let cfg = RunConfig::thread(thread("shallow-chat"));
    for turn in ["one", "two", "three"] {
        g.invoke(human(turn), &cfg).await.unwrap();
    }
    let state = g.get_state(&cfg).await.unwrap();
    assert_eq!(state.values.messages.len(), 6);
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    assert_eq!(history.len(), 1, "the running snapshot only");
}

/// 100 threads × 20 turns at once on one saver (one multiplexed connection), every checkpoint
/// saved: no error, every thread complete. Bounded: fails after 120 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_threads_talk_at_once() {
    const THREADS: usize = 100;
    const TURNS: usize = 20;
    let saver: Arc<dyn DynCheckpointer> = Arc::new(saver_or_skip!(builder()));
    let g = chat().compile().unwrap().with_shared_checkpointer(Arc::clone(&saver));
    let prefix = thread("load");
    let started = std::time::Instant::now();
    let runs = (0..THREADS).map(|t| {
        let (g, cfg) = (g.clone(), RunConfig::thread(format!("{prefix}-{t}")));
        tokio::spawn(async move {
            for turn in 0..TURNS {
                g.invoke(human(&format!("t{t} turn {turn}")), &cfg).await?;
            }
            let state = g.get_state(&cfg).await?;
            Ok::<_, Error>(state.values.messages.len())
        })
    });
    let all = tokio::time::timeout(Duration::from_secs(120), futures_util::future::join_all(runs)).await;
    let all = all.expect("100 × 20 turns within 120 s");
    for (t, result) in all.into_iter().enumerate() {
        assert_eq!(result.expect("task").expect("no error"), 2 * TURNS, "thread {t}");
    }
    eprintln!("{THREADS} threads × {TURNS} turns: {:?}", started.elapsed());
    for t in 0..THREADS {
        saver.delete_thread(&format!("{prefix}-{t}")).await.unwrap();
    }
}
