//! The graphs and inputs of the engine benches, the workloads of the Python twin
//! `benches/python/lg_bench.py` built node for node the same way: shared by `benches/engine.rs`,
//! which times them, and `examples/engine_count.rs`, which runs them for counting instructions.

use std::future::{ready, Ready};

use mnemograph_core::prelude::*;

// ---------------------------------------------------------------------------------------------
// States (lg_bench.py's `S` and `MessagesState`)

/// `class S(TypedDict): n: int; log: Annotated[list, operator.add]`
#[derive(State, Clone, Default, Debug)]
pub(crate) struct S {
    pub(crate) n: i64,
    #[reducer(append)]
    pub(crate) log: Vec<i64>,
}

/// `MessagesState`: one `messages` field merged with `add_messages`.
#[derive(State, Clone, Default, Debug)]
pub(crate) struct Chat {
    #[reducer(add_messages)]
    pub(crate) messages: Vec<Message>,
}

/// The input every `chain`/`fanout` run gets: `{"n": 0, "log": []}`.
pub(crate) fn start_input() -> SUpdate {
    SUpdate::n(0).with_log(Vec::new())
}

// ---------------------------------------------------------------------------------------------
// Graphs

/// lg_bench.py `chain(k)`: START → n0 → … → n{k-1} → END, each node returns `{"n": n + 1}`.
pub(crate) fn chain(k: usize) -> StateGraph<S> {
    let mut g = StateGraph::<S>::new();
    for i in 0..k {
        let name = format!("n{i}");
        g = g.add_node(name.clone(), |s: S| ready(Ok::<_, Error>(SUpdate::n(s.n + 1))));
        let from = if i == 0 { START.to_owned() } else { format!("n{}", i - 1) };
        g = g.add_edge(from, name);
    }
    g.add_edge(format!("n{}", k - 1), END)
}

/// A fan-out worker: returns `{"log": [i]}`.
pub(crate) fn worker(i: i64) -> impl Fn(S) -> Ready<Result<SUpdate>> + Send + Sync + 'static {
    move |_s: S| ready(Ok(SUpdate::log(vec![i])))
}

/// lg_bench.py `fanout(k)`: START → src (`n = 0`) → w0..w{k-1} in parallel → join (`n = len(log)`)
/// → END, the join being LangGraph's `add_edge([w0, …], "join")`.
pub(crate) fn fanout(k: usize) -> StateGraph<S> {
    let mut g = StateGraph::<S>::new()
        .add_node("src", |_s: S| ready(Ok::<_, Error>(SUpdate::n(0))))
        .add_edge(START, "src");
    for i in 0..k {
        let name = format!("w{i}");
        g = g.add_node(name.clone(), worker(i as i64)).add_edge("src", name);
    }
    g.add_node("join", |s: S| ready(Ok::<_, Error>(SUpdate::n(s.log.len() as i64))))
        .add_join((0..k).map(|i| format!("w{i}")), "join")
        .add_edge("join", END)
}

/// lg_bench.py `chat()`: START → agent → END; the agent answers `"echo: " + last message`.
pub(crate) fn chat() -> StateGraph<Chat> {
    StateGraph::<Chat>::new()
        .add_node("agent", |s: Chat| {
            let last = s.messages.last().map(Message::text).unwrap_or_default();
            ready(Ok::<_, Error>(ChatUpdate::messages(vec![Message::ai(format!("echo: {last}"))])))
        })
        .add_edge(START, "agent")
        .add_edge("agent", END)
}

/// The human message of turn `i`, as lg_bench.py writes it.
pub(crate) fn human(i: usize) -> ChatUpdate {
    ChatUpdate::messages(vec![Message::human(format!("turn {i} 你好 hello"))])
}
