//! Property tests: the result of a superstep never depends on task completion order.

use std::time::Duration;

use mnemograph_core::node;
use mnemograph_core::prelude::*;
use proptest::prelude::*;

use crate::support::*;

/// Builds `START -> n0..nk (parallel) -> join`, where node i sleeps `delays[i]` ms and appends its
/// name and adds `i + 1` to `total`.
fn fan(delays: Vec<u64>) -> CompiledGraph<S> {
    let mut g = StateGraph::<S>::new();
    let names: Vec<String> = (0..delays.len()).map(|i| format!("n{i}")).collect();
    for (i, d) in delays.into_iter().enumerate() {
        let name = names[i].clone();
        g = g
            .add_node(name.clone(), move |_s: S| {
                let name = name.clone();
                async move {
                    tokio::time::sleep(Duration::from_millis(d)).await;
                    Ok::<_, Error>(SUpdate::log(vec![name]).with_total(i as i64 + 1))
                }
            })
            .add_edge(START, names[i].clone());
    }
    g.add_node("join", logger("join")).add_join(names, "join").compile().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever the delays (so whatever the completion order), the reducer folds in task-path order.
    #[test]
    fn reducer_results_do_not_depend_on_completion_order(delays in proptest::collection::vec(0u64..8, 2..7)) {
        let n = delays.len();
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
        let out = rt.block_on(fan(delays).invoke(SUpdate::default(), &RunConfig::new())).unwrap();
        let mut expected: Vec<String> = (0..n).map(|i| format!("n{i}")).collect();
        expected.sort();
        expected.push("join".to_owned());
        prop_assert_eq!(&out.log, &expected);
        prop_assert_eq!(out.total, (n * (n + 1) / 2) as i64);
    }
}

/// `add_sequence` adds nodes and chains them in order.
#[tokio::test]
async fn test_add_sequence() {
    let g = StateGraph::<S>::new()
        .add_sequence([
            ("one", node(logger("one"))),
            ("two", node(logger("two"))),
            ("three", node(logger("three"))),
        ])
        .add_edge(START, "one")
        .compile()
        .unwrap();
    let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
    assert_eq!(out.log, ["one", "two", "three"]);
}
