//! A graph's subgraphs as LangGraph finds them by namespace, and its drawing opened to them
//! (`get_graph(xray=...)`), on a graph of three levels.

use mnemograph_core::prelude::*;
use mnemograph_core::GraphLayout;

use crate::support::*;

fn chain(names: &[&str]) -> StateGraph<S> {
    let mut g = StateGraph::<S>::new();
    let mut previous = START.to_owned();
    for name in names {
        g = g.add_node(*name, update).add_edge(previous.as_str(), *name);
        previous = (*name).to_owned();
    }
    g
}

fn pairs(layout: &GraphLayout) -> Vec<(String, String)> {
    let mut edges: Vec<(String, String)> =
        layout.edges.iter().map(|e| (e.source.clone(), e.target.clone())).collect();
    edges.sort();
    edges
}

/// `deep` runs `outer`, which runs `inner` (a, b) then `ask`: the graphs LangGraph was asked
/// about, with its answers below.
fn deep() -> CompiledGraph<S> {
    let inner = chain(&["a", "b"]).compile().expect("inner");
    let outer = StateGraph::<S>::new()
        .add_node("inner", inner)
        .add_node("ask", update)
        .add_edge(START, "inner")
        .add_edge("inner", "ask")
        .compile()
        .expect("outer");
    StateGraph::<S>::new().add_node("outer", outer).add_edge(START, "outer").compile().expect("deep")
}

fn edge(a: &str, b: &str) -> (String, String) {
    (a.to_owned(), b.to_owned())
}

#[test]
fn get_graph_xray_opens_subgraphs_to_the_depth_asked() {
    let g = deep();
    assert_eq!(g.get_graph_xray(0), g.get_graph());
    let one = g.get_graph_xray(1);
    assert_eq!(one.nodes, ["outer:inner", "outer:ask"]);
    assert_eq!(
        pairs(&one),
        [edge("__start__", "outer:inner"), edge("outer:ask", "__end__"), edge("outer:inner", "outer:ask")]
    );
    let all = g.get_graph_xray(usize::MAX);
    assert_eq!(all.nodes, ["outer:inner:a", "outer:inner:b", "outer:ask"]);
    assert_eq!(
        pairs(&all),
        [
            edge("__start__", "outer:inner:a"),
            edge("outer:ask", "__end__"),
            edge("outer:inner:a", "outer:inner:b"),
            edge("outer:inner:b", "outer:ask"),
        ]
    );
}

#[test]
fn get_graph_xray_keeps_a_conditional_exit_of_a_subgraph() {
    let inner = StateGraph::<S>::new()
        .add_node("a", update)
        .add_node("b", update)
        .add_edge(START, "a")
        .add_conditional_edges("a", |_: &S| "done", [("done", END), ("more", "b")])
        .compile()
        .expect("inner");
    let g = StateGraph::<S>::new()
        .add_node("inner", inner)
        .add_node("after", update)
        .add_edge(START, "inner")
        .add_edge("inner", "after")
        .compile()
        .expect("outer");
    let opened = g.get_graph_xray(1);
    let find = |source: &str, target: &str| {
        opened.edges.iter().find(|e| e.source == source && e.target == target).cloned()
    };
    let exit = find("inner:a", "after").expect("a's way out of the subgraph");
    assert!(exit.conditional, "{exit:?}");
    assert_eq!(exit.label.as_deref(), Some("done"));
    let more = find("inner:a", "inner:b").expect("a's way inside the subgraph");
    assert!(more.conditional && more.label.as_deref() == Some("more"), "{more:?}");
    assert!(find("inner:b", "after").is_some_and(|e| !e.conditional), "{opened:?}");
}

#[test]
fn get_subgraphs_finds_namespaces_as_langgraph_does() {
    let g = deep();
    let names =
        |found: Vec<(String, CompiledGraph<S>)>| found.into_iter().map(|(ns, _)| ns).collect::<Vec<_>>();
    assert_eq!(names(g.get_subgraphs(None, false)), ["outer"]);
    assert_eq!(names(g.get_subgraphs(None, true)), ["outer", "outer|inner"]);
    assert_eq!(names(g.get_subgraphs(Some("outer"), true)), ["outer"]);
    assert!(names(g.get_subgraphs(Some("outer|inner"), false)).is_empty());
    assert_eq!(names(g.get_subgraphs(Some("outer|inner"), true)), ["outer|inner"]);
    assert!(names(g.get_subgraphs(Some("out"), true)).is_empty());
    assert!(names(g.get_subgraphs(Some("nope"), true)).is_empty());
}
