//! The engine benches' workloads as a plain program, for counting instructions under
//! `valgrind --tool=callgrind`: a count does not move with the machine's load, so two commits
//! compare on a busy machine. `scripts/bench-instructions.sh` copies this file into each side's
//! engine crate as an example, builds it there and runs it; it uses only the API both sides
//! share.
//!
//! ```sh
//! engine_count WORKLOAD N    # WORKLOAD: chain | chain_mem | fanout | chat_300; N runs of it
//! ```
//!
//! One run first, uncounted by the script's arithmetic (it takes the difference between N and 2N
//! runs), warms what the first run builds.

use std::future::ready;
use std::sync::Arc;

use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::prelude::*;

/// `chain`'s and `fanout`'s state: `n`, and `log` appended to.
#[derive(State, Clone, Default, Debug)]
struct S {
    n: i64,
    #[reducer(append)]
    log: Vec<i64>,
}

/// `chat_300`'s state: messages merged with `add_messages`.
#[derive(State, Clone, Default, Debug)]
struct Chat {
    #[reducer(add_messages)]
    messages: Vec<Message>,
}

fn start_input() -> SUpdate {
    SUpdate::n(0).with_log(Vec::new())
}

/// START → n0 → … → n{k-1} → END, each node `n += 1`.
fn chain(k: usize) -> StateGraph<S> {
    let mut g = StateGraph::<S>::new();
    for i in 0..k {
        let name = format!("n{i}");
        g = g.add_node(name.clone(), |s: S| ready(Ok::<_, Error>(SUpdate::n(s.n + 1))));
        let from = if i == 0 { START.to_owned() } else { format!("n{}", i - 1) };
        g = g.add_edge(from, name);
    }
    g.add_edge(format!("n{}", k - 1), END)
}

/// START → src → w0..w{k-1} in parallel (each appends its index) → join (`n = len(log)`) → END.
fn fanout(k: usize) -> StateGraph<S> {
    let mut g = StateGraph::<S>::new()
        .add_node("src", |_s: S| ready(Ok::<_, Error>(SUpdate::n(0))))
        .add_edge(START, "src");
    for i in 0..k {
        let name = format!("w{i}");
        let index = i as i64;
        g = g.add_node(name.clone(), move |_s: S| ready(Ok::<_, Error>(SUpdate::log(vec![index])))).add_edge("src", name);
    }
    g.add_node("join", |s: S| ready(Ok::<_, Error>(SUpdate::n(s.log.len() as i64))))
        .add_join((0..k).map(|i| format!("w{i}")), "join")
        .add_edge("join", END)
}

/// START → agent → END; the agent answers `"echo: " + last message`.
fn chat() -> StateGraph<Chat> {
    StateGraph::<Chat>::new()
        .add_node("agent", |s: Chat| {
            let last = s.messages.last().map(Message::text).unwrap_or_default();
            ready(Ok::<_, Error>(ChatUpdate::messages(vec![Message::ai(format!("echo: {last}"))])))
        })
        .add_edge(START, "agent")
        .add_edge("agent", END)
}

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
                    let turn = ChatUpdate::messages(vec![Message::human(format!("turn {i} 你好 hello"))]);
                    g.invoke(turn, &cfg).await.expect("chat turn runs");
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
