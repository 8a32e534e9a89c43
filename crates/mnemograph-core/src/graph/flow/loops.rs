//! Loops a run cannot leave.
//!
//! Some edges always fire: a plain edge triggers its target after every run of its source, even
//! when a conditional edge or a `Command` sends control elsewhere too, and a conditional edge whose
//! routing function returns exactly one name, under a path map without END, always triggers one of
//! the map's targets. A set of nodes that each trigger another member through such edges, once
//! entered, never empties: the run ends only at the recursion limit. Join edges never count (a join
//! waits for all its sources), nor do nodes with a static breakpoint (every run stops there).

use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use super::Vertices;
use crate::constants::END;
use crate::graph::branch::RouteShape;
use crate::graph::builder::StateGraph;
use crate::State;

/// The loops of reachable nodes a run cannot leave, each as its members in insertion order,
/// ordered by their first member.
pub(super) fn endless<S: State, C>(
    g: &StateGraph<S, C>,
    v: &Vertices<'_>,
    reached: &[bool],
) -> Vec<Vec<usize>> {
    let forced = forced_successors(g, v);
    let n = v.nodes.len();
    let paused = |i: usize| {
        let name = v.nodes[i];
        g.interrupt_before.iter().chain(&g.interrupt_after).any(|b| b == name)
    };
    // The largest set of nodes each of which always triggers some member: start from every
    // reachable node and drop those that may trigger nothing inside the set, until none is left
    // to drop.
    let mut trapped: Vec<bool> = (0..n).map(|i| reached[i] && !paused(i)).collect();
    loop {
        let leaves: Vec<usize> = (0..n)
            .filter(|i| trapped[*i] && !forced[*i].iter().any(|set| set.iter().all(|t| trapped[*t])))
            .collect();
        if leaves.is_empty() {
            break;
        }
        for i in leaves {
            trapped[i] = false;
        }
    }
    // Trapped nodes that are not on a loop only lead into one: the loops are the strongly
    // connected parts of the always-firing edges between trapped nodes.
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(n, n);
    for _ in 0..n {
        graph.add_node(());
    }
    for (i, sets) in forced.iter().enumerate().filter(|(i, _)| trapped[*i]) {
        for set in sets.iter().filter(|set| set.iter().all(|t| trapped[*t])) {
            for t in set {
                graph.add_edge(NodeIndex::new(i), NodeIndex::new(*t), ());
            }
        }
    }
    let mut out: Vec<Vec<usize>> = tarjan_scc(&graph)
        .into_iter()
        .map(|scc| {
            let mut members: Vec<usize> = scc.into_iter().map(NodeIndex::index).collect();
            members.sort_unstable();
            members
        })
        .filter(|members| match members.as_slice() {
            [one] => trapped[*one] && graph.contains_edge(NodeIndex::new(*one), NodeIndex::new(*one)),
            _ => true,
        })
        .collect();
    out.sort();
    out
}

/// For each node, the sets of nodes it always triggers one member of after it runs.
fn forced_successors<S: State, C>(g: &StateGraph<S, C>, v: &Vertices<'_>) -> Vec<Vec<Vec<usize>>> {
    let mut forced: Vec<Vec<Vec<usize>>> = vec![Vec::new(); v.nodes.len()];
    for (from, to) in &g.edges {
        if let (Some(f), Some(t)) = (v.node(from), v.node(to)) {
            forced[f].push(vec![t]);
        }
    }
    for b in &g.branches {
        let (Some(from), Some(map), RouteShape::One) = (v.node(&b.source), &b.path_map, b.shape) else {
            continue;
        };
        if map.is_empty() || map.iter().any(|(_, to)| to == END) {
            continue;
        }
        let targets: Option<Vec<usize>> = map.iter().map(|(_, to)| v.node(to)).collect();
        if let Some(targets) = targets {
            forced[from].push(targets);
        }
    }
    forced
}
