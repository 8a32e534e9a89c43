//! What tracing costs a run, per node: one process per mode, since a program installs one global
//! subscriber. `scripts/bench-telemetry.sh` runs the modes in turn and prints the medians and the
//! differences (docs/benchmarks/tracing.md).
//!
//! ```text
//! cargo bench -p mnemograph-telemetry --bench overhead -- <off|logs|otlp> [runs]
//! ```
//!
//! - `off`: no subscriber at all.
//! - `logs`: the examples' setup with no OTLP endpoint: log lines at `warn`, so the engine's
//!   `info` spans are disabled at their call sites.
//! - `otlp`: the same plus export at `info` over OTLP/gRPC to an in-process receiver that
//!   counts and discards what it gets, and the metrics derived from the spans.
//!
//! The workload is the engine bench's `chain`: one `invoke` of a 10-node chain, each node
//! `n += 1`, no checkpointer, on a two-worker multi-thread runtime. Prints one line:
//! `mode runs ns_per_run ns_per_node spans_per_invocation` (warm-up runs included in the last).

use std::future::ready;
use std::time::Instant;

use mnemograph_core::prelude::*;
use mnemograph_telemetry::{Protocol, Telemetry};
use mnemograph_test::otlp::Receiver;

/// Nodes in the chain.
const NODES: usize = 10;

#[derive(State, Clone, Default, Debug)]
struct S {
    n: i64,
}

fn chain() -> StateGraph<S> {
    let mut g = StateGraph::<S>::new();
    for i in 0..NODES {
        let name = format!("n{i}");
        g = g.add_node(name.clone(), |s: S| ready(Ok::<_, Error>(SUpdate::n(s.n + 1))));
        let from = if i == 0 { START.to_owned() } else { format!("n{}", i - 1) };
        g = g.add_edge(from, name);
    }
    g.add_edge(format!("n{}", NODES - 1), END)
}

fn main() {
    // `cargo bench` passes `--bench` to every harness-less bench: skip flags.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let mode = args.first().map_or("off", String::as_str).to_owned();
    let runs: usize = args.get(1).map_or(20_000, |r| r.parse().expect("runs: a whole number"));
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let receiver = Receiver::grpc_discarding().await;
        let guard = match mode.as_str() {
            "off" => None,
            "logs" => Some(Telemetry::builder().default_filter("warn").build().unwrap().install().unwrap()),
            "otlp" => {
                let telemetry = Telemetry::builder()
                    .service_name("overhead-bench")
                    .default_filter("warn")
                    .endpoint(receiver.endpoint())
                    .protocol(Protocol::Grpc)
                    .build()
                    .unwrap();
                Some(telemetry.install().unwrap())
            }
            other => panic!("unknown mode `{other}`: off, logs or otlp"),
        };
        let graph = chain().compile().unwrap();
        let config = RunConfig::default();
        for _ in 0..runs / 10 {
            graph.invoke(SUpdate::n(0), &config).await.unwrap();
        }
        let started = Instant::now();
        for _ in 0..runs {
            let out = graph.invoke(SUpdate::n(0), &config).await.unwrap();
            assert_eq!(out.n, NODES as i64);
        }
        let elapsed = started.elapsed().as_nanos() as f64;
        if let Some(guard) = guard {
            // Flushes the last batches before the count is read.
            guard.shutdown().unwrap();
        }
        let per_run = elapsed / runs as f64;
        let invocations = (runs + runs / 10) as f64;
        println!(
            "{mode} {runs} {per_run:.0} {:.0} {:.2}",
            per_run / NODES as f64,
            receiver.received.span_count() as f64 / invocations
        );
    });
}
