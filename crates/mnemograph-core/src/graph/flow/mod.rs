//! `compile()`'s flow checks: where control can go, read from the builder's edges. Their findings
//! are warnings, since LangGraph compiles such graphs and a run may still be steered in from
//! outside (`update_state(as_node)`, a node's dynamic `interrupt`).

mod loops;
mod reachability;

use std::collections::HashMap;

use super::builder::StateGraph;
use crate::constants::{END, START};
use crate::error::GraphIssue;
use crate::State;

/// The warnings for a graph that passed validation (every name it uses exists).
pub(super) fn warnings<S: State, C>(g: &StateGraph<S, C>) -> Vec<GraphIssue> {
    let v = Vertices::of(g);
    let reached = reachability::reached(g, &v);
    let mut out: Vec<GraphIssue> = (0..v.nodes.len())
        .filter(|i| !reached[*i])
        .map(|i| GraphIssue::UnreachableNode(v.nodes[i].to_owned()))
        .collect();
    for members in loops::endless(g, &v, &reached) {
        out.push(GraphIssue::EndlessLoop(members.into_iter().map(|i| v.nodes[i].to_owned()).collect()));
    }
    out
}

/// A name as the checks see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vertex {
    Start,
    /// A node, by insertion order.
    Node(usize),
    End,
}

/// The graph's node names, looked up by name.
struct Vertices<'g> {
    /// Node names in insertion order.
    nodes: Vec<&'g str>,
    index: HashMap<&'g str, usize>,
}

impl<'g> Vertices<'g> {
    fn of<S: State, C>(g: &'g StateGraph<S, C>) -> Self {
        let nodes: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
        let index = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        Self { nodes, index }
    }

    /// `None` for a name that names nothing (validation reports those as errors first).
    fn get(&self, name: &str) -> Option<Vertex> {
        match name {
            START => Some(Vertex::Start),
            END => Some(Vertex::End),
            _ => self.index.get(name).map(|i| Vertex::Node(*i)),
        }
    }

    /// The node a name names, if it is one (neither START nor END).
    fn node(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
}
