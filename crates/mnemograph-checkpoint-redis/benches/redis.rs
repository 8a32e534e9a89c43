//! Redis saver benches, on the server at `REDIS_URL` (default `redis://127.0.0.1:6379/`).
//!
//! | bench | what is timed |
//! |---|---|
//! | `redis/put` | one `put` of a checkpoint with a 2-message blob and two inline values |
//! | `redis/get_tuple` | reading that checkpoint back (latest of its thread) |
//! | `redis/chat_turn` | one echo-agent turn (`add_messages`) on a fresh thread, every checkpoint saved (durability `sync`) |
//! | `redis/chat_turn_at_20` | the 21st turn of a thread that already holds 20 turns |
//!
//! Before the benches it runs `redis-benchmark -t set -n 20000 -q` against the same server (when
//! installed) and prints its line, the physical reference for one round trip plus one command.
//! Without a reachable server it prints why and does nothing.

use std::future::ready;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{black_box, criterion_main, Criterion};
use mnemograph_checkpoint::checkpoint::backend::checkpoint_id;
use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata, CheckpointSource, Checkpointer,
};
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_core::prelude::*;
use tokio::runtime::Runtime as TokioRuntime;

/// Every bench thread id starts with this, so a run's leftovers are easy to find.
const PREFIX: &str = "graph-bench:redis";

fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned())
}

/// START → agent → END; the agent answers `echo: <last message>`.
fn chat() -> StateGraph<MessagesState> {
    StateGraph::<MessagesState>::new()
        .add_node("agent", |s: MessagesState| {
            let last = s.messages.last().map(Message::text).unwrap_or_default();
            ready(Ok::<_, Error>(MessagesStateUpdate::messages(vec![Message::ai(format!("echo: {last}"))])))
        })
        .add_edge(START, "agent")
        .add_edge("agent", END)
}

fn human(i: usize) -> MessagesStateUpdate {
    MessagesStateUpdate::messages(vec![Message::human(format!("turn {i} 你好 hello"))])
}

/// A checkpoint like the chat graph's: a 2-message list (a blob) and two inline values.
fn checkpoint(step: i64) -> (Checkpoint, ChannelVersions) {
    let version = format!("{:032}.0.5", step + 2);
    let messages = vec![Message::human("turn 1 你好 hello").with_id("h1"), Message::ai("echo").with_id("a1")];
    let mut cp = Checkpoint {
        v: 4,
        id: checkpoint_id(step),
        ts: "2026-01-01T00:00:00+00:00".into(),
        ..Default::default()
    };
    for (channel, value) in [
        ("messages", ChannelValue::new(messages)),
        ("count", ChannelValue::new(step)),
        ("branch:to:agent", ChannelValue::Null),
    ] {
        cp.channel_values.insert(channel.into(), value);
        cp.channel_versions.insert(channel.into(), version.as_str().into());
    }
    let new_versions = cp.channel_versions.clone();
    (cp, new_versions)
}

/// `redis-benchmark -t set -n 20000 -q` on the bench's server, if the tool is installed.
fn redis_benchmark_reference() {
    let addr = redis::Client::open(redis_url()).map(|c| c.get_connection_info().addr().clone());
    let Ok(redis::ConnectionAddr::Tcp(host, port)) = addr else {
        eprintln!("reference: redis-benchmark not run (REDIS_URL is not plain TCP)");
        return;
    };
    let port = port.to_string();
    match Command::new("redis-benchmark")
        .args(["-h", &host, "-p", &port, "-t", "set", "-n", "20000", "-q"])
        .output()
    {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            // -q rewrites its progress line with `\r`; the result is the last segment.
            let line = text.rsplit('\r').next().unwrap_or_default().trim();
            eprintln!("reference: redis-benchmark -t set -n 20000 -q → {line}");
        }
        Err(e) => eprintln!("reference: redis-benchmark not run ({e})"),
    }
}

fn bench_saver(c: &mut Criterion, rt: &TokioRuntime, saver: &RedisCheckpointer) {
    let mut group = c.benchmark_group("redis");
    let config = CheckpointConfig::thread(format!("{PREFIX}:put"));
    group.bench_function("put", |b| {
        b.to_async(rt).iter_custom(|iters| {
            let config = &config;
            async move {
                let mut timed = Duration::ZERO;
                let mut parent = config.clone();
                for step in 0..iters as i64 {
                    let (cp, new_versions) = checkpoint(step);
                    let meta = CheckpointMetadata::new(CheckpointSource::Loop, step);
                    let start = Instant::now();
                    parent = black_box(saver.put(&parent, cp, meta, new_versions).await.expect("put"));
                    timed += start.elapsed();
                }
                // One sample's checkpoints, dropped untimed so the thread does not grow across samples.
                saver.delete_thread(&config.thread_id).await.expect("delete");
                timed
            }
        });
    });
    let read = CheckpointConfig::thread(format!("{PREFIX}:get"));
    let (cp, new_versions) = checkpoint(0);
    rt.block_on(saver.put(&read, cp, CheckpointMetadata::new(CheckpointSource::Loop, 0), new_versions))
        .expect("put");
    group.bench_function("get_tuple", |b| {
        b.to_async(rt)
            .iter(|| async { black_box(saver.get_tuple(&read).await.expect("get").expect("saved")) });
    });
    rt.block_on(saver.delete_thread(&read.thread_id)).expect("delete");

    let g = chat().compile_with(saver.clone()).expect("chat compiles");
    group.bench_function("chat_turn", |b| {
        b.to_async(rt).iter_custom(|iters| {
            let g = g.clone();
            async move {
                let mut timed = Duration::ZERO;
                for i in 0..iters {
                    let thread = format!("{PREFIX}:turn:{i}");
                    let cfg = RunConfig::thread(thread.clone());
                    let start = Instant::now();
                    black_box(g.invoke(human(0), &cfg).await.expect("turn"));
                    timed += start.elapsed();
                    saver.delete_thread(&thread).await.expect("delete");
                }
                timed
            }
        });
    });
    // The 21st turn: 20 turns are replayed untimed on a fresh thread before each timed one.
    group.bench_function("chat_turn_at_20", |b| {
        b.to_async(rt).iter_custom(|iters| {
            let g = g.clone();
            async move {
                let mut timed = Duration::ZERO;
                for i in 0..iters {
                    let thread = format!("{PREFIX}:turn20:{i}");
                    let cfg = RunConfig::thread(thread.clone());
                    for turn in 0..20 {
                        g.invoke(human(turn), &cfg).await.expect("turn");
                    }
                    let start = Instant::now();
                    black_box(g.invoke(human(20), &cfg).await.expect("turn"));
                    timed += start.elapsed();
                    saver.delete_thread(&thread).await.expect("delete");
                }
                timed
            }
        });
    });
    group.finish();
}

/// Connects, prints the reference, runs every bench (written out rather than through
/// `criterion_group!` so it can carry this doc comment).
fn benches() {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let saver =
        match rt.block_on(RedisCheckpointer::builder().ttl(Duration::from_secs(600)).connect(&redis_url())) {
            Ok(saver) => saver,
            Err(e) => {
                eprintln!("SKIPPED: Redis at {} is unreachable: {e}", redis_url());
                return;
            }
        };
    redis_benchmark_reference();
    let mut c = Criterion::default().configure_from_args();
    bench_saver(&mut c, &rt, &saver);
}

criterion_main!(benches);
