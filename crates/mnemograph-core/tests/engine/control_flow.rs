use std::time::Duration;

use mnemograph_core::prelude::*;
use mnemograph_core::GraphIssue;

use crate::support::*;

fn traced(
    trace: &Trace,
    name: &'static str,
) -> impl Fn(S) -> std::future::Ready<Result<SUpdate>> + Send + Sync + 'static {
    let trace = trace.clone();
    move |_s: S| {
        trace.push(name);
        std::future::ready(Ok(SUpdate::log(vec![name.to_owned()])))
    }
}

/// How `c` joins the two branches of `a -> b1 -> b2 -> c` and `a -> d -> c`.
enum Fanin {
    /// Two plain edges.
    Edges,
    /// One join edge `[b2, d] -> c`.
    Join,
    /// Two plain edges into a deferred `c`.
    Deferred,
}

/// Runs the fan-out/fan-in graph and returns the order nodes ran in and the final log.
async fn fan_in(mode: Fanin) -> (Vec<String>, Vec<String>) {
    let t = Trace::default();
    let c_options = match mode {
        Fanin::Deferred => NodeOptions::new().defer(),
        _ => NodeOptions::new(),
    };
    let mut g = StateGraph::<S>::new()
        .add_node("a", traced(&t, "a"))
        .add_node("b1", traced(&t, "b1"))
        .add_node("b2", traced(&t, "b2"))
        .add_node("d", traced(&t, "d"))
        .add_node_with("c", traced(&t, "c"), c_options)
        .add_edge(START, "a")
        .add_edge("a", "b1")
        .add_edge("a", "d")
        .add_edge("b1", "b2");
    g = match mode {
        Fanin::Join => g.add_join(["b2", "d"], "c").add_edge("c", END),
        Fanin::Edges | Fanin::Deferred => g.add_edge("b2", "c").add_edge("d", "c"),
    };
    let out = g.compile().unwrap().invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
    (t.take(), out.state.log)
}

/// Two plain edges into `c`: c runs twice, once per arrival.
#[tokio::test]
async fn test_in_one_fan_out_state_graph_separate_edges_run_twice() {
    let (ran, _) = fan_in(Fanin::Edges).await;
    assert_eq!(ran, ["a", "b1", "d", "b2", "c", "c"]);
}

/// A join edge `[b2, d] -> c` waits for both and runs c once.
#[tokio::test]
async fn test_in_one_fan_out_state_graph_waiting_edge() {
    let (ran, log) = fan_in(Fanin::Join).await;
    assert_eq!(ran, ["a", "b1", "d", "b2", "c"]);
    assert_eq!(log, ["a", "b1", "d", "b2", "c"]);
}

/// A deferred node runs only when nothing else is left, so it sees every branch, once.
#[tokio::test]
async fn test_in_one_fan_out_state_graph_defer_node() {
    let (ran, log) = fan_in(Fanin::Deferred).await;
    assert_eq!(ran, ["a", "b1", "d", "b2", "c"]);
    assert_eq!(log.last().map(String::as_str), Some("c"));
}

/// Map-reduce with `Push`: each task gets its own input; results fold in task-path order.
#[tokio::test]
async fn test_send_sequences() {
    let g = StateGraph::<S>::new()
        .add_node("fan", |_s: S| async { Ok::<_, Error>(SUpdate::default()) })
        .add_node("work", |s: S| async move {
            // Later pushes finish first: completion order must not matter.
            tokio::time::sleep(Duration::from_millis(5 * (4 - s.total as u64))).await;
            Ok::<_, Error>(SUpdate::log(vec![format!("work:{}", s.hello)]).with_total(s.total))
        })
        .add_edge(START, "fan")
        .add_conditional_edges(
            "fan",
            |_s: &S| {
                (1..=3)
                    .map(|i| Push::new("work", S { hello: format!("item{i}"), total: i, ..S::default() }))
                    .collect::<Vec<_>>()
            },
            (),
        )
        .compile()
        .unwrap();
    let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
    assert_eq!(out.log, ["work:item1", "work:item2", "work:item3"]);
    assert_eq!(out.total, 6);
}

/// Command goto sends control without a static edge, and static edges still fire.
#[tokio::test]
async fn test_command_goto() {
    let t = Trace::default();
    let g = StateGraph::<S>::new()
        .add_node("router", |_s: S| async {
            Ok::<_, Error>(Command::new().update(SUpdate::hello("routed")).goto("target"))
        })
        .add_node("target", traced(&t, "target"))
        .add_node("always", traced(&t, "always"))
        .add_edge(START, "router")
        .add_edge("router", "always")
        .compile()
        .unwrap();
    let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
    let mut ran = t.take();
    ran.sort();
    assert_eq!(ran, ["always", "target"]);
    assert_eq!(out.hello, "routed");
}

/// A conditional edge with a path map routes by key and reads the source's own writes.
#[tokio::test]
async fn test_conditional_edges_path_map_reads_fresh_state() {
    let g = StateGraph::<S>::new()
        .add_node("count", |s: S| async move {
            Ok::<_, Error>(SUpdate::total(1).with_log(vec![format!("n{}", s.total)]))
        })
        .add_edge(START, "count")
        .add_conditional_edges(
            "count",
            |s: &S| if s.total < 3 { "again" } else { "stop" },
            [("again", "count"), ("stop", END)],
        )
        .compile()
        .unwrap();
    let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
    assert_eq!(out.total, 3);
    assert_eq!(out.log, ["n0", "n1", "n2"]);
}

/// A chain of N nodes needs a recursion limit of N + 1; N gives the exact error.
#[tokio::test]
async fn test_recursion_limit() {
    let mut g = StateGraph::<S>::new().add_edge(START, "n0");
    for i in 0..5 {
        g = g.add_node(format!("n{i}"), logger("x"));
        if i > 0 {
            g = g.add_edge(format!("n{}", i - 1), format!("n{i}"));
        }
    }
    let g = g.compile().unwrap();
    let ok = g.invoke(SUpdate::default(), &RunConfig::new().recursion_limit(6)).await.unwrap();
    assert_eq!(ok.log.len(), 5);
    let err = g.invoke(SUpdate::default(), &RunConfig::new().recursion_limit(5)).await.unwrap_err();
    assert!(matches!(err, Error::RecursionLimit { limit: 5 }));
    assert_eq!(
        err.to_string(),
        "recursion limit of 5 reached without hitting a stop condition; you can increase the limit by setting `recursion_limit` in the run config"
    );
}

/// `compile()` reports every problem at once, with suggestions, and never panics.
#[test]
fn test_compile_reports_every_issue() {
    let err = StateGraph::<S>::new()
        .add_node("retrieve", logger("r"))
        .add_node("retrieve", logger("r"))
        .add_node("a:b", logger("x"))
        .add_edge("retrive", "call_model")
        .add_edge(END, "retrieve")
        .interrupt_before(["nope"])
        .compile()
        .unwrap_err();
    let Error::InvalidGraph(issues) = &err else { panic!("{err:?}") };
    assert!(issues.contains(&GraphIssue::DuplicateNode("retrieve".into())));
    assert!(issues.contains(&GraphIssue::ReservedName("a:b".into())));
    assert!(issues.contains(&GraphIssue::NoEntryPoint));
    assert!(issues.contains(&GraphIssue::EdgeFromEnd));
    assert!(issues.contains(&GraphIssue::UnknownBreakpoint { when: "before", node: "nope".into() }));
    assert!(issues.iter().any(|i| matches!(i, GraphIssue::UnknownNode { missing, did_you_mean: Some(s), .. } if missing == "retrive" && s == "retrieve")));
    assert!(issues
        .iter()
        .any(|i| matches!(i, GraphIssue::UnknownNode { missing, .. } if missing == "call_model")));
    let text = err.to_string();
    assert!(text.starts_with("graph did not compile:\n  - "), "{text}");
    assert!(text.contains("(did you mean \"retrieve\"?)"), "{text}");
}

/// A failing node is retried by its policy, then succeeds.
#[tokio::test(start_paused = true)]
async fn test_retry_policy_retries_then_succeeds() {
    let attempts = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let a = attempts.clone();
    let g = StateGraph::<S>::new()
        .add_node_with(
            "flaky",
            move |_s: S| {
                let a = a.clone();
                async move {
                    if a.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 2 {
                        return Err::<SUpdate, _>(Error::UnknownNode("transient".into()));
                    }
                    Ok(SUpdate::hello("done"))
                }
            },
            NodeOptions::new().retry(RetryPolicy::new().max_attempts(3).jitter(false)),
        )
        .add_edge(START, "flaky")
        .compile()
        .unwrap();
    let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
    assert_eq!(out.hello, "done");
    assert_eq!(attempts.load(std::sync::atomic::Ordering::SeqCst), 3);
}

/// The retry predicate stops retries for errors it rejects.
#[tokio::test(start_paused = true)]
async fn test_retry_on_predicate() {
    let attempts = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
    let a = attempts.clone();
    let g = StateGraph::<S>::new()
        .add_node_with(
            "bad",
            move |_s: S| {
                a.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async { Err::<SUpdate, _>(Error::UnknownNode("permanent".into())) }
            },
            NodeOptions::new()
                .retry(RetryPolicy::new().max_attempts(5).retry_on(|e| !e.to_string().contains("permanent"))),
        )
        .add_edge(START, "bad")
        .compile()
        .unwrap();
    let err = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap_err();
    assert!(matches!(err, Error::Node { ref node, .. } if node == "bad"));
    assert_eq!(attempts.load(std::sync::atomic::Ordering::SeqCst), 1);
}
