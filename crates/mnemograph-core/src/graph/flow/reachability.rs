//! Which nodes a run can reach from START.
//!
//! The reach graph over-approximates where control can go, so that a node it does not reach
//! really is unreachable: a plain or join edge leads to its target; a conditional edge leads to
//! its path map's targets, or to every node when it has no path map or its routing function may
//! push; a node whose output may carry a `goto` or pushes leads to every node. "Every node" is one
//! extra vertex, ANY, with an edge to each node, which keeps the graph linear in size.

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::Dfs;

use super::{Vertex, Vertices};
use crate::graph::branch::RouteShape;
use crate::graph::builder::StateGraph;
use crate::State;

/// For each node in insertion order, whether a run can reach it.
pub(super) fn reached<S: State, C>(g: &StateGraph<S, C>, v: &Vertices<'_>) -> Vec<bool> {
    let n = v.nodes.len();
    // Vertices: the nodes, then START, END and ANY.
    let (start, end, any) = (n, n + 1, n + 2);
    let at = |x: Vertex| match x {
        Vertex::Node(i) => i,
        Vertex::Start => start,
        Vertex::End => end,
    };
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(n + 3, g.edges.len() + n);
    for _ in 0..n + 3 {
        graph.add_node(());
    }
    let mut edge = |from: usize, to: usize| {
        graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), ());
    };
    let joins = g.joins.iter().flat_map(|(sources, to)| sources.iter().map(move |s| (s, to)));
    for (from, to) in g.edges.iter().map(|(f, t)| (f, t)).chain(joins) {
        if let (Some(f), Some(t)) = (v.get(from), v.get(to)) {
            edge(at(f), at(t));
        }
    }
    for b in &g.branches {
        let Some(from) = v.get(&b.source).map(at) else { continue };
        match (&b.path_map, b.shape) {
            (Some(map), RouteShape::One | RouteShape::Names) => {
                for to in map.iter().filter_map(|(_, to)| v.get(to)) {
                    edge(from, at(to));
                }
            }
            _ => edge(from, any),
        }
    }
    for (i, spec) in g.nodes.iter().enumerate() {
        if spec.node.0.may_goto() {
            edge(i, any);
        }
    }
    for i in 0..n {
        edge(any, i);
    }
    let mut seen = vec![false; n];
    let mut dfs = Dfs::new(&graph, NodeIndex::new(start));
    while let Some(x) = dfs.next(&graph) {
        if let Some(s) = seen.get_mut(x.index()) {
            *s = true;
        }
    }
    seen
}
