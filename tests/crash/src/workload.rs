//! The graph every worker runs: rounds of fan-out to parallel tasks, static and mapped, whose
//! writes fold into reducer channels.
//!
//! One round is three supersteps:
//! 1. `plan` bumps `round` (a plain, last-value field);
//! 2. the fan-out: the static nodes `a`, `b`, `c` plus [`MAPPED`] `map` tasks made by
//!    [`Push`] (map-reduce), all in parallel, each appending to `log` and adding
//!    to `total` (reducer fields, so a write applied twice or lost shows in the result);
//! 3. `collect` records the running total and routes back to `plan` until [`ROUNDS`] are done.
//!
//! Every node's effect is a pure function of its input, so any run of a thread, however often it
//! was killed and resumed, must end in the state of an uninterrupted run. Nodes sleep a seeded,
//! per-execution random time first, so kills land inside node bodies, between steps and during
//! saver calls, and then record themselves in the [`Journal`].

use std::sync::Arc;
use std::time::Duration;

use mnemograph_core::prelude::*;
use mnemograph_core::Goto;
use xxhash_rust::xxh3::xxh3_64;

use crate::journal::{Journal, Record};

/// Rounds of plan / fan-out / collect.
pub const ROUNDS: i64 = 4;
/// Mapped (`Push`) tasks per fan-out step, next to the three static ones.
pub const MAPPED: i64 = 4;
/// The static fan-out nodes.
const FANNED: [&str; 3] = ["a", "b", "c"];

/// The workload's state.
#[derive(State, Clone, Default, Debug, PartialEq)]
pub struct Work {
    /// One entry per task whose writes were applied, in task-path order: a write applied twice
    /// shows as a duplicate entry, a lost one as a gap.
    #[reducer(append)]
    pub log: Vec<String>,
    /// The sum of every fan-out task's contribution.
    #[reducer(add)]
    pub total: i64,
    /// The current round; written by `plan` only.
    pub round: i64,
    /// A mapped task's item; set only in the input of `map` tasks.
    pub item: i64,
}

/// The `total` reducer.
fn add(acc: &mut i64, value: i64) {
    *acc += value;
}

/// What the nodes do besides computing their update: dawdle and record themselves.
#[derive(Debug, Clone)]
pub struct Instrument {
    /// Where executions are recorded; `None` for the in-process reference run.
    journal: Option<Arc<Journal>>,
    /// Seeds the per-execution delays.
    seed: u64,
    /// Which process of the thread this is (part of the delay seed, and of every record).
    incarnation: u32,
    /// Upper bound of a node's delay; zero for no delay.
    max_delay: Duration,
}

impl Instrument {
    /// No journal, no delays: for the reference run.
    pub fn none() -> Self {
        Self { journal: None, seed: 0, incarnation: 0, max_delay: Duration::ZERO }
    }

    /// Records into `journal` after a delay of up to `max_delay` drawn from `seed`.
    pub fn new(journal: Journal, seed: u64, incarnation: u32, max_delay: Duration) -> Self {
        Self { journal: Some(Arc::new(journal)), seed, incarnation, max_delay }
    }

    /// The delay of one execution: a hash of the seed, the incarnation, the step and the node, so
    /// a seed reproduces the same schedule of delays (though not the OS's scheduling).
    fn delay(&self, step: i64, label: &str) -> Duration {
        let max = self.max_delay.as_micros() as u64;
        if max == 0 {
            return Duration::ZERO;
        }
        let key = format!("{}:{}:{step}:{label}", self.seed, self.incarnation);
        Duration::from_micros(xxh3_64(key.as_bytes()) % (max + 1))
    }

    /// A node body's instrumentation: sleeps, then appends the execution record. Called last in
    /// the body, so the record means "this execution reached its end".
    async fn run(&self, rt: &Runtime, label: &str) -> crate::Result<()> {
        tokio::time::sleep(self.delay(rt.step(), label)).await;
        if let Some(journal) = &self.journal {
            journal.append(&Record {
                incarnation: self.incarnation,
                step: rt.step(),
                task_id: rt.task_id().to_owned(),
                node: label.to_owned(),
            })?;
        }
        Ok(())
    }
}

/// What a static fan-out node adds to `total` in a round.
fn weight(node: &str, round: i64) -> i64 {
    let base = match node {
        "a" => 1,
        "b" => 10,
        _ => 100,
    };
    base * round
}

/// The workload graph, compiled without a checkpointer (attach one with
/// `with_shared_checkpointer`).
///
/// # Errors
/// Only if the graph does not compile, which would be a bug of this crate.
pub fn graph(instrument: &Instrument) -> mnemograph_core::Result<CompiledGraph<Work>> {
    let mut builder = StateGraph::<Work>::new();
    let i = instrument.clone();
    builder = builder.add_node("plan", move |s: Work, rt: Runtime| {
        let i = i.clone();
        async move {
            i.run(&rt, "plan").await?;
            let round = s.round + 1;
            Ok::<_, crate::Error>(WorkUpdate::round(round).with_log(vec![format!("plan r{round}")]))
        }
    });
    for name in FANNED {
        let i = instrument.clone();
        builder = builder.add_node(name, move |s: Work, rt: Runtime| {
            let i = i.clone();
            async move {
                i.run(&rt, name).await?;
                let log = vec![format!("r{} {name}", s.round)];
                Ok::<_, crate::Error>(WorkUpdate::total(weight(name, s.round)).with_log(log))
            }
        });
    }
    let i = instrument.clone();
    builder = builder.add_node("map", move |s: Work, rt: Runtime| {
        let i = i.clone();
        async move {
            i.run(&rt, &format!("map#{}", s.item)).await?;
            let log = vec![format!("r{} map#{}", s.round, s.item)];
            Ok::<_, crate::Error>(WorkUpdate::total(1000 * s.round + s.item).with_log(log))
        }
    });
    let i = instrument.clone();
    builder = builder.add_node("collect", move |s: Work, rt: Runtime| {
        let i = i.clone();
        async move {
            i.run(&rt, "collect").await?;
            Ok::<_, crate::Error>(WorkUpdate::log(vec![format!("collect r{} total {}", s.round, s.total)]))
        }
    });
    builder
        .add_edge(START, "plan")
        .add_conditional_edges("plan", fan_out, ())
        .add_edge("a", "collect")
        .add_edge("b", "collect")
        .add_edge("c", "collect")
        .add_edge("map", "collect")
        .add_conditional_edges("collect", |s: &Work| if s.round < ROUNDS { "plan" } else { END }, ())
        .compile()
}

/// `plan`'s routing: the static fan-out nodes plus one `map` push per item.
fn fan_out(s: &Work) -> Vec<Goto<Work>> {
    let mut to: Vec<Goto<Work>> = FANNED.iter().map(|n| Goto::from(*n)).collect();
    for item in 1..=MAPPED {
        to.push(Push::new("map", Work { round: s.round, item, ..Work::default() }).into());
    }
    to
}

/// The input every thread starts from.
pub fn input() -> WorkUpdate {
    WorkUpdate::log(vec!["start".to_owned()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_uninterrupted_run_has_the_expected_shape() {
        let g = graph(&Instrument::none()).unwrap().with_checkpointer(InMemoryCheckpointer::new());
        let cfg = RunConfig::thread("shape");
        let out = g.invoke(input(), &cfg).await.unwrap().into_state();
        assert_eq!(out.round, ROUNDS);
        // Per round: a + b + c = 111·r, the maps 4·1000·r + (1+2+3+4).
        let expected: i64 = (1..=ROUNDS).map(|r| 111 * r + MAPPED * 1000 * r + 10).sum();
        assert_eq!(out.total, expected);
        assert_eq!(out.log.len(), 1 + ROUNDS as usize * (2 + FANNED.len() + MAPPED as usize));
        assert_eq!(out.log[2..9], ["r1 a", "r1 b", "r1 c", "r1 map#1", "r1 map#2", "r1 map#3", "r1 map#4"]);
        let history = g.get_state_history(&cfg, Default::default()).await.unwrap();
        // Input, START, then three steps per round.
        assert_eq!(history.len(), 2 + 3 * ROUNDS as usize);
        assert_eq!(history[history.len() - 3].tasks.len(), FANNED.len() + MAPPED as usize);
    }

    #[test]
    fn delays_are_seeded_and_bounded() {
        let dir = std::env::temp_dir().join(format!("crash-delay-{}.log", std::process::id()));
        let j = |seed| Instrument::new(Journal::open(&dir).unwrap(), seed, 0, Duration::from_micros(500));
        let (a, b) = (j(1), j(1));
        for step in 0..20 {
            assert_eq!(a.delay(step, "a"), b.delay(step, "a"));
            assert!(a.delay(step, "a") <= Duration::from_micros(500));
        }
        assert!((0..20).any(|s| a.delay(s, "a") != j(2).delay(s, "a")));
        std::fs::remove_file(&dir).unwrap();
    }
}
