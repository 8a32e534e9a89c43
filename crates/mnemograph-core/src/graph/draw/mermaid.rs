//! [`CompiledGraph::draw_mermaid`].

use std::fmt::Write as _;

use super::escape::{is_bare_mermaid_label, mermaid_label};
use super::ids::MermaidIds;
use crate::constants::{END, START};
use crate::graph::compiled::CompiledGraph;
use crate::State;

impl<S: State, C: Send + Sync + 'static> CompiledGraph<S, C> {
    /// The graph as a Mermaid flowchart, as LangGraph's `draw_mermaid()` renders it: START and END
    /// as rounded terminals, conditional edges dashed (labelled with their path-map key).
    ///
    /// Any node name draws: a name that is not a plain Mermaid word gets a sanitized id and
    /// keeps its text in a quoted, entity-escaped label, and so does an unusual path-map key.
    pub fn draw_mermaid(&self) -> String {
        let d = &self.built.drawing;
        let names = [START].into_iter().chain(d.nodes.iter().map(String::as_str)).chain([END]);
        let ids = MermaidIds::new(names.chain(d.edges.iter().flat_map(|e| [e.from.as_str(), e.to.as_str()])));
        let mut out = String::from("---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n");
        // Writing to a String cannot fail.
        let _ = writeln!(out, "\t{START}([<p>{START}</p>]):::first");
        for n in &d.nodes {
            let id = ids.get(n);
            let _ = if id == n || is_bare_mermaid_label(n, id) {
                writeln!(out, "\t{id}({n})")
            } else {
                writeln!(out, "\t{id}(\"{}\")", mermaid_label(n))
            };
        }
        let _ = writeln!(out, "\t{END}([<p>{END}</p>]):::last");
        for e in &d.edges {
            let (from, to) = (ids.get(&e.from), ids.get(&e.to));
            let arrow = if e.conditional { "-.->" } else { "-->" };
            let _ = match &e.label {
                Some(label) if is_plain_label(label) => {
                    if e.conditional {
                        writeln!(out, "\t{from} -. &nbsp;{label}&nbsp; .-> {to};")
                    } else {
                        writeln!(out, "\t{from} -- &nbsp;{label}&nbsp; --> {to};")
                    }
                }
                Some(label) => writeln!(out, "\t{from} {arrow}|\"{}\"| {to};", mermaid_label(label)),
                None => writeln!(out, "\t{from} {arrow} {to};"),
            };
        }
        out.push_str("\tclassDef default fill:#f2f0ff,line-height:1.2\n");
        out.push_str("\tclassDef first fill-opacity:0\n");
        out.push_str("\tclassDef last fill:#bfb6fc\n");
        out
    }
}

/// Whether an edge label can go unquoted between LangGraph's `&nbsp;`s: words of ASCII letters,
/// digits and `_` joined by single spaces (keywords are plain text there).
fn is_plain_label(label: &str) -> bool {
    label
        .split(' ')
        .all(|word| !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
}
