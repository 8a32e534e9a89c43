//! [`CompiledGraph::draw_dot`].

use std::fmt::Write as _;

use super::escape::dot_string;
use crate::constants::{END, START};
use crate::graph::compiled::CompiledGraph;
use crate::State;

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    /// The graph in Graphviz DOT; conditional edges dashed.
    ///
    /// Every id is a quoted string and every node has an explicit label, both escaped for DOT,
    /// so any node name or path-map key draws as it is written.
    pub fn draw_dot(&self) -> String {
        let d = &self.built.drawing;
        let mut out = String::from("digraph G {\n");
        let mut node = |name: &str, shape: &str| {
            let q = dot_string(name);
            // Writing to a String cannot fail.
            let _ = writeln!(out, "  \"{q}\" [label=\"{q}\", shape={shape}];");
        };
        node(START, "oval");
        for n in &d.nodes {
            node(n, "box");
        }
        node(END, "oval");
        for e in &d.edges {
            let mut attrs = Vec::new();
            if e.conditional {
                attrs.push("style=dashed".to_owned());
            }
            if let Some(l) = &e.label {
                attrs.push(format!("label=\"{}\"", dot_string(l)));
            }
            let attrs = if attrs.is_empty() { String::new() } else { format!(" [{}]", attrs.join(", ")) };
            let _ = writeln!(out, "  \"{}\" -> \"{}\"{attrs};", dot_string(&e.from), dot_string(&e.to));
        }
        out.push_str("}\n");
        out
    }
}
