//! The engine benches' workloads as a plain program, for counting instructions under
//! `valgrind --tool=callgrind`: a count does not move with the machine's load, so two commits
//! compare on a busy machine. `scripts/bench-instructions.sh` builds it in each side's engine
//! crate (copying it and `benches/workloads/` into a side that lacks them), so it uses only the
//! API both sides share.
//!
//! ```sh
//! engine_count WORKLOAD N    # WORKLOAD: chain | chain_mem | fanout | chat_300; N runs of it
//! ```
//!
//! One run first, uncounted by the script's arithmetic (it takes the difference between N and 2N
//! runs), warms what the first run builds.

use std::sync::Arc;

use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::prelude::*;
use workloads::{chain, chat, fanout, human, start_input};

#[path = "../benches/workloads/mod.rs"]
mod workloads;

async fn run(workload: &str, runs: usize) {
    match workload {
        "chain" => {
            let g = chain(10).compile().expect("chain compiles");
            let cfg = RunConfig::new();
            for _ in 0..=runs {
                assert_eq!(g.invoke(start_input(), &cfg).await.expect("chain runs").n, 10);
            }
        }
        "chain_mem" => {
            let saver: Arc<dyn DynCheckpointer> = Arc::new(InMemoryCheckpointer::new());
            let g = chain(10).compile().expect("chain compiles").with_shared_checkpointer(saver);
            for i in 0..=runs {
                let cfg = RunConfig::thread(format!("t{i}"));
                assert_eq!(g.invoke(start_input(), &cfg).await.expect("chain_mem runs").n, 10);
            }
        }
        "fanout" => {
            let g = fanout(50).compile().expect("fanout compiles");
            let cfg = RunConfig::new();
            for _ in 0..=runs {
                assert_eq!(g.invoke(start_input(), &cfg).await.expect("fanout runs").n, 50);
            }
        }
        "chat_300" => {
            let base = chat().compile().expect("chat compiles");
            for _ in 0..=runs {
                let g = base.clone().with_checkpointer(InMemoryCheckpointer::new());
                let cfg = RunConfig::thread("bench");
                for i in 0..300 {
                    g.invoke(human(i), &cfg).await.expect("chat turn runs");
                }
            }
        }
        other => panic!("unknown workload {other}: chain | chain_mem | fanout | chat_300"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (workload, runs) = match args.as_slice() {
        [_, workload, runs] => (workload.clone(), runs.parse::<usize>().expect("N is a number")),
        _ => panic!("usage: engine_count WORKLOAD N"),
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    rt.block_on(run(&workload, runs));
}
