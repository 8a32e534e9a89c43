//! Drawing a compiled graph: Mermaid (as LangGraph's `draw_mermaid`) and Graphviz DOT.

use std::fmt::Write as _;

use super::builder::{StateGraph, END, START};
use super::compiled::CompiledGraph;
use crate::state::State;

/// One drawn edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DrawnEdge {
    from: String,
    to: String,
    /// The path-map key, when it differs from the target.
    label: Option<String>,
    conditional: bool,
}

/// The shape of a graph, kept from the builder for drawing (the engine's layout no longer has
/// edges to END or path-map keys).
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

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    /// The graph as a Mermaid flowchart, as LangGraph's `draw_mermaid()` renders it: START and END
    /// as rounded terminals, conditional edges dashed (labelled with their path-map key).
    pub fn draw_mermaid(&self) -> String {
        let d = &self.inner.drawing;
        let mut out = String::from("---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n");
        let _ = writeln!(out, "\t{START}([<p>{START}</p>]):::first");
        for n in &d.nodes {
            let _ = writeln!(out, "\t{}({n})", mermaid_id(n));
        }
        let _ = writeln!(out, "\t{END}([<p>{END}</p>]):::last");
        for e in &d.edges {
            let (from, to) = (mermaid_id(&e.from), mermaid_id(&e.to));
            let _ = match (&e.label, e.conditional) {
                (Some(label), _) => writeln!(out, "\t{from} -. &nbsp;{label}&nbsp; .-> {to};"),
                (None, true) => writeln!(out, "\t{from} -.-> {to};"),
                (None, false) => writeln!(out, "\t{from} --> {to};"),
            };
        }
        out.push_str("\tclassDef default fill:#f2f0ff,line-height:1.2\n");
        out.push_str("\tclassDef first fill-opacity:0\n");
        out.push_str("\tclassDef last fill:#bfb6fc\n");
        out
    }

    /// The graph in Graphviz DOT; conditional edges dashed.
    pub fn draw_dot(&self) -> String {
        let d = &self.inner.drawing;
        let mut out = String::from("digraph G {\n");
        let _ = writeln!(out, "  {START:?} [shape=oval];");
        for n in &d.nodes {
            let _ = writeln!(out, "  {n:?} [shape=box];");
        }
        let _ = writeln!(out, "  {END:?} [shape=oval];");
        for e in &d.edges {
            let mut attrs = Vec::new();
            if e.conditional {
                attrs.push("style=dashed".to_owned());
            }
            if let Some(l) = &e.label {
                attrs.push(format!("label={l:?}"));
            }
            let attrs = if attrs.is_empty() { String::new() } else { format!(" [{}]", attrs.join(", ")) };
            let _ = writeln!(out, "  {:?} -> {:?}{attrs};", e.from, e.to);
        }
        out.push_str("}\n");
        out
    }
}

/// Mermaid ids cannot contain spaces or some punctuation; node names may.
fn mermaid_id(name: &str) -> String {
    name.chars().map(|c| if c.is_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use crate::prelude::*;

    #[test]
    fn mermaid_shows_plain_and_conditional_edges() {
        async fn n(_s: MessagesState) -> Result<()> {
            Ok(())
        }
        let g = StateGraph::<MessagesState>::new()
            .add_node("model", n)
            .add_node("tools", n)
            .add_edge(START, "model")
            .add_conditional_edges("model", |_s: &MessagesState| END, [("call", "tools"), ("__end__", END)])
            .add_edge("tools", "model")
            .compile()
            .unwrap();
        let m = g.draw_mermaid();
        assert!(m.contains("\t__start__ --> model;\n"), "{m}");
        assert!(m.contains("\tmodel -. &nbsp;call&nbsp; .-> tools;\n"), "{m}");
        assert!(m.contains("\tmodel -.-> __end__;\n"), "{m}");
        assert!(m.contains("\ttools --> model;\n"), "{m}");
        assert!(m.contains("\t__end__([<p>__end__</p>]):::last\n"), "{m}");
        let dot = g.draw_dot();
        assert!(dot.contains("\"model\" -> \"tools\" [style=dashed, label=\"call\"];"), "{dot}");
    }
}
