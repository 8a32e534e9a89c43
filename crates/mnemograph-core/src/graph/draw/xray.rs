//! [`CompiledGraph::get_graph_xray`]: the layout with its subgraphs opened, as LangGraph's
//! `get_graph(xray=...)` draws them.

use super::json::{GraphEdge, GraphLayout};
use crate::constants::{END, START};
use crate::{CompiledGraph, State};

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    /// The graph's layout with each subgraph node replaced by the subgraph's own nodes, named
    /// `"<node>:<inner node>"`, down to `depth` levels of nesting (LangGraph's
    /// `get_graph(xray=depth)`; its `xray=True` is any depth, `usize::MAX`). Depth 0 is
    /// [`get_graph`](Self::get_graph). Edges into a subgraph node lead to the nodes its subgraph
    /// starts with, and edges out of it leave from the nodes its subgraph ends at.
    ///
    /// ```
    /// use mnemograph_core::prelude::*;
    /// # #[derive(State, Clone, Default, Debug)] struct S { n: u32 }
    /// let node = |_: S| async { Ok::<_, Error>(SUpdate::n(1_u32)) };
    /// let inner = StateGraph::<S>::new().add_node("a", node).add_edge(START, "a").compile()?;
    /// let outer = StateGraph::<S>::new()
    ///     .add_node("inner", inner)
    ///     .add_node("b", node)
    ///     .add_edge(START, "inner")
    ///     .add_edge("inner", "b")
    ///     .compile()?;
    /// assert_eq!(outer.get_graph().nodes, ["inner", "b"]);
    /// let opened = outer.get_graph_xray(1);
    /// assert_eq!(opened.nodes, ["inner:a", "b"]);
    /// assert_eq!((opened.edges[0].source.as_str(), opened.edges[0].target.as_str()), (START, "inner:a"));
    /// # Ok::<(), mnemograph_core::Error>(())
    /// ```
    pub fn get_graph_xray(&self, depth: usize) -> GraphLayout {
        let mut layout = self.get_graph();
        if depth == 0 {
            return layout;
        }
        for (name, child) in self.get_subgraphs(None, false) {
            layout.open(&name, &child.get_graph_xray(depth - 1));
        }
        layout
    }
}

impl GraphLayout {
    /// Replaces the node `name` with `inner`'s nodes, prefixed `"<name>:"`.
    fn open(&mut self, name: &str, inner: &GraphLayout) {
        let Some(at) = self.nodes.iter().position(|n| n == name) else { return };
        let prefixed = |node: &str| format!("{name}:{node}");
        self.nodes.splice(at..=at, inner.nodes.iter().map(|n| prefixed(n)));
        let starts: Vec<&GraphEdge> = inner.edges.iter().filter(|e| e.source == START).collect();
        let ends: Vec<&GraphEdge> = inner.edges.iter().filter(|e| e.target == END).collect();
        let mut edges = Vec::with_capacity(self.edges.len() + inner.edges.len());
        for edge in &self.edges {
            // Where the edge leaves from and goes to once the node is opened, with the inner
            // edge's own label and branching where it takes one.
            let from: Vec<(String, Option<&GraphEdge>)> = if edge.source == name {
                ends.iter().map(|e| (prefixed(&e.source), Some(*e))).collect()
            } else {
                vec![(edge.source.clone(), None)]
            };
            let to: Vec<(String, Option<&GraphEdge>)> = if edge.target == name {
                starts.iter().map(|e| (prefixed(&e.target), Some(*e))).collect()
            } else {
                vec![(edge.target.clone(), None)]
            };
            for (source, out) in &from {
                for (target, into) in &to {
                    let inner_edges = [out, into].into_iter().flatten();
                    let mut label = edge.label.clone();
                    let mut conditional = edge.conditional;
                    for e in inner_edges {
                        label = label.or_else(|| e.label.clone());
                        conditional |= e.conditional;
                    }
                    edges.push(GraphEdge {
                        source: source.clone(),
                        target: target.clone(),
                        label,
                        conditional,
                    });
                }
            }
        }
        edges.extend(inner.edges.iter().filter(|e| e.source != START && e.target != END).map(|e| {
            GraphEdge {
                source: prefixed(&e.source),
                target: prefixed(&e.target),
                label: e.label.clone(),
                conditional: e.conditional,
            }
        }));
        self.edges = edges;
    }
}
