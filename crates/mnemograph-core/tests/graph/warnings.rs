//! `compile()`'s warnings: unreachable nodes and loops with no way out.

use mnemograph_core::prelude::*;
use mnemograph_core::{GraphIssue, Route};

use crate::support::*;

fn unreachable(node: &str) -> GraphIssue {
    GraphIssue::UnreachableNode(node.to_owned())
}

fn endless(nodes: &[&str]) -> GraphIssue {
    GraphIssue::EndlessLoop(nodes.iter().map(|n| (*n).to_owned()).collect())
}

/// Runs a graph with a small recursion limit.
async fn run(g: &CompiledGraph<S>) -> Result<RunOutcome<S>> {
    g.invoke(SUpdate::count(0), &RunConfig::new().recursion_limit(10)).await
}

#[test]
fn sound_graph_has_no_warnings() {
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", update)
        .add_edge(START, "a")
        .add_conditional_edges(
            "a",
            |s: &S| if s.count < 3 { "again" } else { "done" },
            [("again", "a"), ("done", "b")],
        )
        .add_edge("b", END)
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), []);
}

#[test]
fn unreachable_node_is_reported() {
    // `b` and `c` (after it) have no way in; the other nodes return updates, which cannot goto.
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", maybe)
        .add_node("c", unit)
        .add_edge(START, "a")
        .add_edge("a", END)
        .add_edge("b", "c")
        .add_edge("c", END)
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), [unreachable("b"), unreachable("c")]);
    assert_eq!(g.warnings()[0].to_string(), "node `b` is not reachable from START");
}

#[test]
fn path_map_limits_where_a_conditional_edge_reaches() {
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", update)
        .add_node("stray", update)
        .add_edge(START, "a")
        .add_conditional_edges("a", |_s: &S| END, [("go", "b"), (END, END)])
        .add_conditional_edges("b", |_s: &S| vec![END], [END])
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), [unreachable("stray")]);
}

#[test]
fn conditional_edges_count_as_reaching_every_node() {
    // Without a path map, the routing function may name any node.
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", update)
        .add_edge(START, "a")
        .add_conditional_edges("a", |_s: &S| END, ())
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), []);
}

#[test]
fn routing_functions_that_may_push_reach_every_node() {
    // A push names its node directly, whatever the path map says: `worker` is reached by pushes
    // only, from a routing function returning pushes or a whole `Route`.
    let to_workers = |s: &S| vec![Push::new("worker", s.clone())];
    let by_route = |_s: &S| Route::<S>::none();
    for g in [
        StateGraph::<S>::new()
            .add_node("a", update)
            .add_node("worker", update)
            .add_edge(START, "a")
            .add_conditional_edges("a", to_workers, [END]),
        StateGraph::<S>::new()
            .add_node("a", update)
            .add_node("worker", update)
            .add_edge(START, "a")
            .add_conditional_edges("a", by_route, [END]),
    ] {
        assert_eq!(g.compile().unwrap().warnings(), []);
    }
}

#[test]
fn command_and_push_nodes_reach_every_node() {
    for g in [
        StateGraph::<S>::new().add_node("a", command).add_node("b", update),
        StateGraph::<S>::new().add_node("a", pushes).add_node("b", update),
    ] {
        let g = g.add_edge(START, "a").compile().unwrap();
        assert_eq!(g.warnings(), []);
    }
}

#[test]
fn subgraph_nodes_do_not_reach_beyond_their_edges() {
    let child = StateGraph::<S>::new().add_node("x", update).add_edge(START, "x").compile().unwrap();
    let g = StateGraph::<S>::new()
        .add_node("child", child)
        .add_node("stray", update)
        .add_edge(START, "child")
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), [unreachable("stray")]);
}

#[tokio::test]
async fn cycle_without_path_to_end_is_reported() {
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", update)
        .add_node("c", update)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .add_edge("c", "b")
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), [endless(&["b", "c"])]);
    assert!(g.warnings()[0].to_string().starts_with("a loop with no way out through `b`, `c`: "));
    assert!(matches!(run(&g).await, Err(Error::RecursionLimit { .. })));
}

#[tokio::test]
async fn self_loop_is_reported() {
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_edge(START, "a")
        .add_edge("a", "a")
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), [endless(&["a"])]);
    assert!(matches!(run(&g).await, Err(Error::RecursionLimit { .. })));
}

#[tokio::test]
async fn plain_edge_loop_with_a_conditional_exit_is_reported() {
    // The plain edge `b -> a` fires after every run of `b`, also when the routing function
    // picks END: END is reachable, yet the run never finishes.
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", update)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .add_edge("b", "a")
        .add_conditional_edges("b", |_s: &S| END, ())
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), [endless(&["a", "b"])]);
    assert!(matches!(run(&g).await, Err(Error::RecursionLimit { .. })));
}

#[tokio::test]
async fn single_name_route_without_end_forms_a_loop() {
    // The routing function returns exactly one key and the map has no END: `a` always goes to
    // `b` or `c`, and both always go back to `a`.
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", update)
        .add_node("c", update)
        .add_edge(START, "a")
        .add_conditional_edges("a", |s: &S| if s.count % 2 == 0 { "b" } else { "c" }, ["b", "c"])
        .add_edge("b", "a")
        .add_edge("c", "a")
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), [endless(&["a", "b", "c"])]);
    assert!(matches!(run(&g).await, Err(Error::RecursionLimit { .. })));
}

#[tokio::test]
async fn conditional_loops_are_not_reported() {
    // The agent/tools loop ends when the routing function picks END; a routing function
    // returning a list may pick nothing, which ends the run too.
    let agent = StateGraph::<S>::new()
        .add_node("agent", update)
        .add_node("tools", update)
        .add_edge(START, "agent")
        .add_conditional_edges("agent", |s: &S| if s.count < 3 { "tools" } else { END }, ["tools", END])
        .add_edge("tools", "agent")
        .compile()
        .unwrap();
    assert_eq!(agent.warnings(), []);
    assert_eq!(run(&agent).await.unwrap().count, 3);

    let list = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", update)
        .add_edge(START, "a")
        .add_conditional_edges("a", |s: &S| if s.count < 3 { vec!["b"] } else { vec![] }, ["b"])
        .add_edge("b", "a")
        .compile()
        .unwrap();
    assert_eq!(list.warnings(), []);
    assert_eq!(run(&list).await.unwrap().count, 3);
}

#[test]
fn loops_through_a_breakpoint_are_not_reported() {
    // Every run stops at the breakpoint, so each run finishes (as an interrupt).
    let g = StateGraph::<S>::new()
        .add_node("chat", update)
        .add_node("human", update)
        .add_edge(START, "chat")
        .add_edge("chat", "human")
        .add_edge("human", "chat")
        .interrupt_before(["human"])
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), []);
}

#[test]
fn join_edges_do_not_form_endless_loops() {
    // The join waits for `b` and `c`; `c` runs once, so `d` runs once.
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", update)
        .add_node("c", update)
        .add_node("d", update)
        .add_edge(START, "a")
        .add_edge(START, "c")
        .add_edge("a", "b")
        .add_join(["b", "c"], "d")
        .add_edge("d", "a")
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), []);
}

#[test]
fn unreachable_loops_are_reported_as_unreachable_only() {
    let g = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("x", update)
        .add_node("y", update)
        .add_edge(START, "a")
        .add_edge("x", "y")
        .add_edge("y", "x")
        .compile()
        .unwrap();
    assert_eq!(g.warnings(), [unreachable("x"), unreachable("y")]);
}

#[test]
fn invalid_graphs_get_errors_not_warnings() {
    let err = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("stray", update)
        .add_edge(START, "a")
        .add_edge("a", "nowhere")
        .compile()
        .unwrap_err();
    let Error::InvalidGraph(issues) = &err else { panic!("{err:?}") };
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(matches!(&issues[0], GraphIssue::UnknownNode { missing, .. } if missing == "nowhere"));
}
