//! A superstep of CPU-bound nodes: the workload `cpu_step` of the Python twin
//! `benches/python/lg_bench.py`, built node for node the same way (`scripts/bench.sh` runs both
//! and prints the ratio; docs/benchmarks/parallel.md has the figures).
//!
//! | bench | lg_bench.py | what is timed |
//! |---|---|---|
//! | `cpu_step` | `cpu_step` | one `invoke`: START → `c0`…`c3` in one superstep → END, each node computing for 200 ms of its thread's CPU time and returning `log = [i]` |
//! | `cpu_step_in_place` | — | the same graph with `with_spawned_tasks(false)`: its tasks polled in the run's own future |
//!
//! Runtime: a multi-thread tokio runtime with 2 workers, so the four nodes can run two at a time;
//! Python LangGraph runs a step's sync nodes in a thread pool, one at a time under the GIL.
//!
//! A node computes until its thread has spent 200 ms on the CPU (Linux's per-thread
//! `/proc/thread-self/schedstat`, as Python's `time.thread_time`), not for 200 ms of wall time,
//! so time the thread spends preempted by other processes does not count as work. Elsewhere it
//! falls back to wall time.

use std::future::Ready;
use std::time::{Duration, Instant};

use criterion::{black_box, criterion_main, Criterion, SamplingMode};
use mnemograph_core::prelude::*;

/// `class S(TypedDict): n: int; log: Annotated[list, operator.add]`, as in the engine benches.
#[derive(State, Clone, Default, Debug)]
struct S {
    n: i64,
    #[reducer(append)]
    log: Vec<i64>,
}

/// Nodes in the step.
const NODES: usize = 4;
/// CPU time each node spends.
const WORK: Duration = Duration::from_millis(200);

/// The CPU time the calling thread has used, where the system tells it.
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// Computes until the calling thread has used `work` of CPU time (wall time where that is not
/// known).
fn burn(work: Duration) -> u64 {
    let (cpu0, wall0) = (thread_cpu(), Instant::now());
    let mut x = 0u64;
    loop {
        for _ in 0..100_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        }
        let spent = match (cpu0, thread_cpu()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => wall0.elapsed(),
        };
        if spent >= work {
            return black_box(x);
        }
    }
}

/// lg_bench.py `cpu_node(i)`: computes for [`WORK`], returns `{"log": [i]}`.
fn cpu_node(i: i64) -> impl Fn(S) -> Ready<Result<SUpdate>> + Send + Sync + 'static {
    move |_s: S| {
        burn(WORK);
        std::future::ready(Ok(SUpdate::log(vec![i])))
    }
}

/// lg_bench.py `cpu_step()`: START → c0..c3 (one superstep) → END.
fn cpu_step() -> StateGraph<S> {
    let mut g = StateGraph::<S>::new();
    for i in 0..NODES {
        let name = format!("c{i}");
        g = g.add_node(name.clone(), cpu_node(i as i64)).add_edge(START, name.clone()).add_edge(name, END);
    }
    g
}

/// Both benches, the spawned one first (what `criterion_group!` would generate, written out so
/// the function can carry a doc comment for the workspace's `missing_docs` lint).
fn benches() {
    let mut c = Criterion::default().configure_from_args();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let spawned = cpu_step().compile().expect("cpu_step compiles");
    let in_place = spawned.clone().with_spawned_tasks(false);
    let cfg = RunConfig::new();
    for g in [&spawned, &in_place] {
        let out = rt.block_on(g.invoke(SUpdate::log(Vec::new()), &cfg)).expect("cpu_step runs");
        assert_eq!(out.log, [0, 1, 2, 3], "lg_bench.py asserts the writes in task-path order");
    }
    let mut group = c.benchmark_group("parallel");
    // An iteration takes a few hundred milliseconds: ten of them, each its own sample.
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    for (id, g) in [("cpu_step", &spawned), ("cpu_step_in_place", &in_place)] {
        group.bench_function(id, |b| b.to_async(&rt).iter(|| g.invoke(SUpdate::log(Vec::new()), &cfg)));
    }
    group.finish();
}

criterion_main!(benches);
