//! Engine benches: the workloads of the Python twin `benches/python/lg_bench.py`, built node for
//! node the same way so the two can be compared side by side (`scripts/bench.sh` runs both and
//! prints the ratios; docs/benchmarks/engine.md has the figures).
//!
//! | bench | lg_bench.py | what is timed |
//! |---|---|---|
//! | `chain` | `chain` | one `invoke` of a 10-node chain, each node `n += 1`, no checkpointer |
//! | `chain_mem` | `chain_mem` | the same with an in-memory saver, a fresh thread per run |
//! | `fanout` | `fanout` | `src` → 50 parallel `w{i}` (each appends `i` to `log`) → `join` (`n = len(log)`) |
//! | `chat_mem/turn_at_300` | `chat_mem` | one echo-agent turn on a thread that already holds 300 turns |
//! | `chat_mem/300_turns` | `chat_mem` | a whole 300-turn conversation from an empty thread |
//! | `chat_mem/last_50_of_300` | `chat_mem` | turns 251..=300 of such a conversation (50 turns) |
//!
//! `lg_bench.py chat_mem` prints one line per chat view, per turn: `chat_mem/300_turns` / 300 and
//! `chat_mem/last_50_of_300` / 50 are the figures to compare with them.
//!
//! Runtime: a current-thread tokio runtime by default, where the engine polls the tasks of a
//! superstep inside the run's own future. On a multi-thread runtime it spawns the tasks of a step
//! of several on the workers, which pays for nodes that compute; these nodes return at once, so
//! there it adds only the cost of spawning and of the worker/park machinery.
//! `GRAPH_BENCH_RT=multi` selects the multi-thread runtime to compare (docs/benchmarks/compare.md,
//! "Runtime"); `benches/parallel.rs` has a step of nodes that compute.

use std::cell::OnceCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{black_box, criterion_main, Criterion};
use mnemograph_core::checkpoint::{CheckpointConfig, CheckpointTuple, DynCheckpointer};
use mnemograph_core::prelude::*;
use tokio::runtime::Runtime as TokioRuntime;
use workloads::{chain, chat, fanout, human, start_input, Chat};

mod workloads;

// ---------------------------------------------------------------------------------------------
// Runtime

fn runtime() -> TokioRuntime {
    let multi = std::env::var("GRAPH_BENCH_RT").is_ok_and(|v| v == "multi");
    let mut b = if multi {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    b.enable_all().build().expect("tokio runtime")
}

// ---------------------------------------------------------------------------------------------
// Benches

fn bench_chain(c: &mut Criterion) {
    let rt = runtime();
    let g = chain(10).compile().expect("chain compiles");
    let cfg = RunConfig::new();
    // Sanity: ten increments.
    assert_eq!(rt.block_on(g.invoke(start_input(), &cfg)).expect("chain runs").n, 10);
    c.bench_function("chain", |b| b.to_async(&rt).iter(|| g.invoke(start_input(), &cfg)));
}

fn bench_chain_mem(c: &mut Criterion) {
    let rt = runtime();
    let g = chain(10).compile().expect("chain compiles");
    c.bench_function("chain_mem", |b| {
        // lg_bench.py runs every invoke on a new thread `t{i}` of one saver. Here each criterion
        // sample gets its own saver (so memory stays bounded however many iterations criterion
        // picks), and its runs use threads t0, t1, …; dropping the saver is not timed.
        b.to_async(&rt).iter_custom(|iters| {
            let saver: Arc<dyn DynCheckpointer> = Arc::new(InMemoryCheckpointer::new());
            let g = g.clone().with_shared_checkpointer(Arc::clone(&saver));
            async move {
                let configs: Vec<RunConfig> =
                    (0..iters).map(|i| RunConfig::thread(format!("t{i}"))).collect();
                let start = Instant::now();
                for cfg in &configs {
                    black_box(g.invoke(start_input(), cfg).await.expect("chain_mem runs"));
                }
                let elapsed = start.elapsed();
                drop(g);
                drop(saver);
                elapsed
            }
        });
    });
}

fn bench_fanout(c: &mut Criterion) {
    let rt = runtime();
    let g = fanout(50).compile().expect("fanout compiles");
    let cfg = RunConfig::new();
    let out = rt.block_on(g.invoke(start_input(), &cfg)).expect("fanout runs");
    assert_eq!(out.n, 50, "lg_bench.py asserts out[\"n\"] == 50");
    // Writes are applied in task-path order, i.e. by node name as text: w0, w1, w10, w11, …
    let mut by_name: Vec<i64> = (0..50).collect();
    by_name.sort_by_key(|i| format!("w{i}"));
    assert_eq!(out.log, by_name);
    c.bench_function("fanout", |b| b.to_async(&rt).iter(|| g.invoke(start_input(), &cfg)));
}

/// Runs turns `range` of a conversation on `cfg`.
async fn talk(g: &CompiledGraph<Chat>, cfg: &RunConfig, range: std::ops::Range<usize>) {
    for i in range {
        black_box(g.invoke(human(i), cfg).await.expect("chat turn runs"));
    }
}

fn bench_chat_mem(c: &mut Criterion) {
    const HISTORY: usize = 300;
    let rt = runtime();
    let base = chat().compile().expect("chat compiles");
    let mut group = c.benchmark_group("chat_mem");

    // One more turn on a thread that already holds HISTORY turns (2 × HISTORY messages).
    //
    // A thread is filled turn by turn once, untimed. Each iteration then starts a fresh thread
    // whose newest checkpoint is a copy of that 300-turn checkpoint (the values are shared `Arc`s,
    // so copying is cheap), times one turn on it, and deletes it, so every timed turn sees
    // exactly 300 turns of history and memory does not grow with the iteration count. The filling
    // happens on first use, so a filter that skips this bench skips it too.
    {
        let saver: Arc<dyn DynCheckpointer> = Arc::new(InMemoryCheckpointer::new());
        let g = base.clone().with_shared_checkpointer(Arc::clone(&saver));
        let filled: OnceCell<CheckpointTuple> = OnceCell::new();
        let fill = || {
            rt.block_on(talk(&g, &RunConfig::thread("filled"), 0..HISTORY));
            let tuple = rt
                .block_on(saver.get_tuple(&CheckpointConfig::thread("filled")))
                .expect("read")
                .expect("filled thread");
            let messages: Vec<Message> =
                tuple.checkpoint.channel_values["messages"].decode().expect("messages");
            assert_eq!(messages.len(), 2 * HISTORY);
            tuple
        };
        group.bench_function("turn_at_300", |b| {
            let tuple = filled.get_or_init(fill);
            b.to_async(&rt).iter_custom(|iters| {
                let (g, saver, tuple) = (g.clone(), Arc::clone(&saver), tuple.clone());
                async move {
                    let mut timed = Duration::ZERO;
                    for i in 0..iters {
                        let thread = format!("copy{i}");
                        let cp = tuple.checkpoint.clone();
                        let new_versions = cp.channel_versions.clone();
                        saver
                            .put(
                                &CheckpointConfig::thread(thread.clone()),
                                cp,
                                tuple.metadata.clone(),
                                new_versions,
                            )
                            .await
                            .expect("copy the 300-turn checkpoint");
                        let cfg = RunConfig::thread(thread.clone());
                        let start = Instant::now();
                        let out = g.invoke(human(HISTORY), &cfg).await.expect("chat turn runs");
                        timed += start.elapsed();
                        assert_eq!(out.messages.len(), 2 * HISTORY + 2);
                        drop(out);
                        saver.delete_thread(&thread).await.expect("delete copy");
                    }
                    timed
                }
            });
        });
    }

    // lg_bench.py `chat_mem 300`: 300 turns on a new thread of a new saver; its `us_per_turn` is
    // this figure / 300. The saver is dropped after the clock stops.
    // Ten samples: one iteration is a whole conversation, too long for criterion's default 100 in
    // its measurement time. The measurement time itself is left to the command line.
    group.sample_size(10);
    group.bench_function("300_turns", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let base = base.clone();
            async move {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let g = base.clone().with_checkpointer(InMemoryCheckpointer::new());
                    let cfg = RunConfig::thread("bench");
                    let start = Instant::now();
                    talk(&g, &cfg, 0..HISTORY).await;
                    timed += start.elapsed();
                }
                timed
            }
        });
    });

    // The last 50 of those 300 turns (the time of 50 turns; divide by 50 for one turn). Turns
    // 0..250 are run untimed first.
    group.bench_function("last_50_of_300", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let base = base.clone();
            async move {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let g = base.clone().with_checkpointer(InMemoryCheckpointer::new());
                    let cfg = RunConfig::thread("bench");
                    talk(&g, &cfg, 0..HISTORY - 50).await;
                    let start = Instant::now();
                    talk(&g, &cfg, HISTORY - 50..HISTORY).await;
                    timed += start.elapsed();
                }
                timed
            }
        });
    });
    group.finish();
}

/// Every bench, in lg_bench.py's order (what `criterion_group!` would generate, written out so the
/// function can carry a doc comment for the workspace's `missing_docs` lint).
fn benches() {
    let mut c = Criterion::default().configure_from_args();
    bench_chain(&mut c);
    bench_chain_mem(&mut c);
    bench_fanout(&mut c);
    bench_chat_mem(&mut c);
}

criterion_main!(benches);
