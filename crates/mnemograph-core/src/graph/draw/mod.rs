//! Drawing a compiled graph: Mermaid (as LangGraph's `draw_mermaid`) and Graphviz DOT.
//!
//! Node names and path-map keys are arbitrary strings, so each format gets its own escaping
//! ([`escape`]) and Mermaid, whose ids are bare words, its own ids ([`ids`]).

mod dot;
mod escape;
mod ids;
mod json;
mod mermaid;
mod xray;

pub use json::{GraphEdge, GraphLayout};

use super::builder::StateGraph;
use crate::constants::END;
use crate::State;

/// One drawn edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DrawnEdge {
    from: String,
    to: String,
    /// The path-map key, when it differs from the target.
    label: Option<String>,
    conditional: bool,
}

/// The shape of a graph, kept from the builder for drawing (the engine's layout has no edges to
/// END or path-map keys).
#[derive(Debug, Clone, Default)]
pub(crate) struct Drawing {
    nodes: Vec<String>,
    edges: Vec<DrawnEdge>,
}

impl Drawing {
    pub(crate) fn of<S: State, C>(g: &StateGraph<S, C>) -> Self {
        let nodes: Vec<String> = g.nodes.iter().map(|n| n.name.clone()).collect();
        let mut edges: Vec<DrawnEdge> = Vec::new();
        let plain = |from: &str, to: &str| DrawnEdge {
            from: from.into(),
            to: to.into(),
            label: None,
            conditional: false,
        };
        for (from, to) in &g.edges {
            edges.push(plain(from, to));
        }
        for (sources, to) in &g.joins {
            for from in sources {
                edges.push(plain(from, to));
            }
        }
        for b in &g.branches {
            match &b.path_map {
                Some(map) => {
                    for (key, to) in map {
                        let label = (key != to).then(|| key.clone());
                        edges.push(DrawnEdge {
                            from: b.source.clone(),
                            to: to.clone(),
                            label,
                            conditional: true,
                        });
                    }
                }
                // No path map: the routing function may name any node (LangGraph draws them all).
                None => {
                    for to in nodes.iter().map(String::as_str).chain([END]) {
                        edges.push(DrawnEdge {
                            from: b.source.clone(),
                            to: to.into(),
                            label: None,
                            conditional: true,
                        });
                    }
                }
            }
        }
        edges.dedup();
        Self { nodes, edges }
    }
}
