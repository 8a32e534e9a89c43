//! [`CompiledGraph::get_graph`]: the graph's nodes and edges as data, and LangGraph's JSON form of
//! them (what the LangGraph server's `/assistants/{id}/graph` answers).

use serde_json::{json, Value};

use super::DrawnEdge;
use crate::constants::{END, START};
use crate::{CompiledGraph, State};

/// An edge of a [`GraphLayout`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GraphEdge {
    /// Where it starts (a node, or `__start__`).
    pub source: String,
    /// Where it ends (a node, or `__end__`).
    pub target: String,
    /// The path-map key of a conditional edge, when it differs from the target.
    pub label: Option<String>,
    /// Whether a routing function chooses it.
    pub conditional: bool,
}

/// A compiled graph's shape: its nodes in declaration order and its edges (LangGraph's
/// `get_graph()`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GraphLayout {
    /// The nodes, without `__start__` and `__end__`.
    pub nodes: Vec<String>,
    /// Every edge, conditional ones included.
    pub edges: Vec<GraphEdge>,
}

impl GraphLayout {
    /// LangGraph's JSON of the graph: `{"nodes": [{"id", "type", "data"}], "edges": [{"source",
    /// "target", ...}]}`, with `__start__` first and `__end__` last when an edge reaches it.
    pub fn to_json(&self) -> Value {
        let node = |name: &str| json!({ "id": name, "type": "runnable", "data": { "name": name } });
        let mut nodes = vec![node(START)];
        nodes.extend(self.nodes.iter().map(|n| node(n)));
        if self.edges.iter().any(|e| e.target == END) {
            nodes.push(json!({ "id": END }));
        }
        let edges: Vec<Value> = self
            .edges
            .iter()
            .map(|e| {
                let mut edge = json!({ "source": e.source, "target": e.target });
                if e.conditional {
                    edge["conditional"] = Value::Bool(true);
                }
                if let Some(label) = &e.label {
                    edge["data"] = Value::String(label.clone());
                }
                edge
            })
            .collect();
        json!({ "nodes": nodes, "edges": edges })
    }
}

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    /// The graph's nodes and edges (LangGraph's `get_graph()`), the data behind
    /// [`draw_mermaid`](Self::draw_mermaid).
    ///
    /// ```
    /// use mnemograph_core::prelude::*;
    /// # #[derive(State, Clone, Default, Debug)] struct S { n: u32 }
    /// let g = StateGraph::<S>::new()
    ///     .add_node("a", |_: S| async { Ok::<_, Error>(SUpdate::n(1_u32)) })
    ///     .add_edge(START, "a")
    ///     .compile()?;
    /// let layout = g.get_graph();
    /// assert_eq!(layout.nodes, ["a"]);
    /// assert_eq!(layout.to_json()["edges"][0]["target"], "a");
    /// assert_eq!(layout.edges[1].target, END, "a node nothing follows ends the run");
    /// # Ok::<(), mnemograph_core::Error>(())
    /// ```
    pub fn get_graph(&self) -> GraphLayout {
        let drawing = &self.built.drawing;
        let mut edges: Vec<GraphEdge> = drawing.edges.iter().map(GraphEdge::from).collect();
        // A node nothing follows ends the run: LangGraph draws that as an edge to END.
        for node in &drawing.nodes {
            if !edges.iter().any(|e| e.source == *node) {
                edges.push(GraphEdge {
                    source: node.clone(),
                    target: END.to_owned(),
                    label: None,
                    conditional: false,
                });
            }
        }
        GraphLayout { nodes: drawing.nodes.clone(), edges }
    }
}

impl From<&DrawnEdge> for GraphEdge {
    fn from(e: &DrawnEdge) -> Self {
        Self {
            source: e.from.clone(),
            target: e.to.clone(),
            label: e.label.clone(),
            conditional: e.conditional,
        }
    }
}
