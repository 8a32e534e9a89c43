//! The path a thread actually ran, derived from its history, as a Mermaid flowchart in the style
//! of mnemograph-core's `draw_mermaid`: one edge per transition between the nodes of consecutive
//! steps, labelled with the steps that took it; a run that stopped early ends in a dotted edge to
//! the nodes it would run next. Only the current branch counts ([`lineage`]): after a fork, the
//! steps of the abandoned branch are not part of the path.

use std::fmt::Write as _;

use serde_json::{json, Value as Json};

use super::summary::Entry;

const START: &str = "__start__";
const END: &str = "__end__";

/// How an edge was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// One step ran after the other.
    Ran,
    /// The thread stopped here (interrupt, error or breakpoint) and would run this next.
    Next,
}

/// One transition of the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// From this node.
    pub from: String,
    /// To this node.
    pub to: String,
    /// The steps at which the target ran (empty for [`EdgeKind::Next`] and for edges to the end).
    pub steps: Vec<i64>,
    /// How it was taken.
    pub kind: EdgeKind,
}

/// The path of a thread: its nodes in order of first appearance and its transitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path {
    /// Nodes, `__start__` first and `__end__` last when present.
    pub nodes: Vec<String>,
    /// Transitions, in order of first use.
    pub edges: Vec<Edge>,
}

impl Path {
    /// The path of a history given oldest first.
    pub fn from_entries(oldest_first: &[Entry]) -> Self {
        let mut path = Path::default();
        let mut prev: Vec<String> = Vec::new();
        for entry in oldest_first {
            match entry.source.as_deref() {
                Some("input") => {
                    // A new run on the thread: the previous one (if any) had finished.
                    path.close(&mut prev);
                    prev = vec![START.to_owned()];
                    path.node(START);
                }
                _ if entry.nodes.is_empty() => {}
                // Step 0 applies the input: the start node itself, not a move away from it.
                _ if entry.nodes == [START] => prev = vec![START.to_owned()],
                _ => {
                    let step = entry.step.unwrap_or_default();
                    for to in &entry.nodes {
                        path.node(to);
                        for from in &prev {
                            path.edge(from, to, Some(step), EdgeKind::Ran);
                        }
                    }
                    prev.clone_from(&entry.nodes);
                }
            }
        }
        match oldest_first.last() {
            Some(last) if !last.next.is_empty() => {
                for to in &last.next {
                    path.node(to);
                    for from in &prev {
                        path.edge(from, to, None, EdgeKind::Next);
                    }
                }
            }
            _ => path.close(&mut prev),
        }
        // `__end__` is drawn last, as draw_mermaid does.
        if let Some(i) = path.nodes.iter().position(|n| n == END) {
            let end = path.nodes.remove(i);
            path.nodes.push(end);
        }
        path
    }

    /// Ends the current run at `__end__`.
    fn close(&mut self, prev: &mut Vec<String>) {
        if prev.is_empty() || prev == &[START] {
            return;
        }
        self.node(END);
        for from in std::mem::take(prev) {
            self.edge(&from, END, None, EdgeKind::Ran);
        }
    }

    fn node(&mut self, name: &str) {
        if !self.nodes.iter().any(|n| n == name) {
            self.nodes.push(name.to_owned());
        }
    }

    fn edge(&mut self, from: &str, to: &str, step: Option<i64>, kind: EdgeKind) {
        let found = self.edges.iter_mut().find(|e| e.from == from && e.to == to && e.kind == kind);
        let edge = match found {
            Some(edge) => edge,
            None => {
                self.edges.push(Edge { from: from.to_owned(), to: to.to_owned(), steps: Vec::new(), kind });
                let last = self.edges.len() - 1;
                &mut self.edges[last]
            }
        };
        edge.steps.extend(step);
    }

    /// The Mermaid flowchart.
    pub fn to_mermaid(&self, title: &str) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = writeln!(out, "---\ntitle: {}\n---\ngraph TD;", title.replace(['\n', '\r'], " "));
        for n in &self.nodes {
            let id = mermaid_id(n);
            let _ = match n.as_str() {
                START => writeln!(out, "\t{id}([<p>{START}</p>]):::first"),
                END => writeln!(out, "\t{id}([<p>{END}</p>]):::last"),
                // Quoted only when the name is not already a plain id, like draw_mermaid's nodes.
                _ if id == *n => writeln!(out, "\t{id}({n})"),
                _ => writeln!(out, "\t{id}(\"{}\")", n.replace('"', "#quot;")),
            };
        }
        for e in &self.edges {
            let (from, to) = (mermaid_id(&e.from), mermaid_id(&e.to));
            let steps: Vec<String> = e.steps.iter().map(i64::to_string).collect();
            let _ = match (e.kind, steps.is_empty()) {
                (EdgeKind::Next, _) => writeln!(out, "\t{from} -. &nbsp;next&nbsp; .-> {to};"),
                (EdgeKind::Ran, true) => writeln!(out, "\t{from} --> {to};"),
                (EdgeKind::Ran, false) => {
                    let noun = if steps.len() == 1 { "step" } else { "steps" };
                    writeln!(out, "\t{from} -->|\"{noun} {}\"| {to};", steps.join(", "))
                }
            };
        }
        out.push_str("\tclassDef default fill:#f2f0ff,line-height:1.2\n");
        out.push_str("\tclassDef first fill-opacity:0\n");
        out.push_str("\tclassDef last fill:#bfb6fc\n");
        out
    }

    /// The path as JSON: nodes and edges.
    pub fn to_json(&self) -> Json {
        let edges: Vec<Json> = self
            .edges
            .iter()
            .map(|e| {
                let kind = match e.kind {
                    EdgeKind::Ran => "ran",
                    EdgeKind::Next => "next",
                };
                json!({"from": e.from, "to": e.to, "steps": e.steps, "kind": kind})
            })
            .collect();
        json!({"nodes": self.nodes, "edges": edges})
    }
}

/// The current branch of a history listed newest first: the newest checkpoint and its ancestors,
/// oldest first. Checkpoints a fork left behind (replayed from an older one) are not on it.
pub fn lineage(newest_first: &[Entry]) -> Vec<Entry> {
    let mut chain: Vec<Entry> = Vec::new();
    let mut cur = newest_first.first();
    while let Some(entry) = cur {
        chain.push(entry.clone());
        cur = entry.parent_id.as_ref().and_then(|p| newest_first.iter().find(|e| &e.checkpoint_id == p));
        // A malformed chain (a cycle) must not loop forever.
        if chain.len() > newest_first.len() {
            break;
        }
    }
    chain.reverse();
    chain
}

/// A node name as a Mermaid id, as mnemograph-core's `draw_mermaid` makes them (so the ids of both
/// drawings agree).
pub fn mermaid_id(name: &str) -> String {
    name.chars().map(|c| if c.is_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// A supplied drawing with the nodes that ran highlighted, when it is a flowchart (`graph` or
/// `flowchart`); any other diagram is returned as it is.
pub fn highlight(drawing: &str, ran: &[String]) -> String {
    let is_flowchart = drawing.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("graph ") || l.starts_with("graph\t") || l.starts_with("flowchart ")
    });
    let ids: Vec<String> =
        ran.iter().filter(|n| !matches!(n.as_str(), START | END)).map(|n| mermaid_id(n)).collect();
    if !is_flowchart || ids.is_empty() {
        return drawing.to_owned();
    }
    let mut out = drawing.trim_end().to_owned();
    out.push_str("\n\tclassDef ran stroke:#d9480f,stroke-width:3px\n");
    let _ = writeln!(out, "\tclass {} ran;", ids.join(","));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(step: i64, source: &str, nodes: &[&str], next: &[&str]) -> Entry {
        Entry {
            checkpoint_id: format!("c{step}"),
            parent_id: None,
            step: Some(step),
            source: Some(source.into()),
            ts: String::new(),
            nodes: nodes.iter().map(|n| (*n).to_owned()).collect(),
            changes: Vec::new(),
            pending: Vec::new(),
            next: next.iter().map(|n| (*n).to_owned()).collect(),
        }
    }

    #[test]
    fn two_runs_share_edges_and_parallel_steps_fan_out() {
        let history = [
            entry(-1, "input", &[], &["__start__"]),
            entry(0, "loop", &["__start__"], &["agent"]),
            entry(1, "loop", &["agent"], &["a", "b"]),
            entry(2, "loop", &["a", "b"], &[]),
            entry(3, "input", &[], &["__start__"]),
            entry(4, "loop", &["__start__"], &["agent"]),
            entry(5, "loop", &["agent"], &["a", "b"]),
        ];
        let path = Path::from_entries(&history);
        assert_eq!(path.nodes, ["__start__", "agent", "a", "b", "__end__"]);
        let mermaid = path.to_mermaid("path of thread t");
        for line in [
            "\t__start__ -->|\"steps 1, 5\"| agent;",
            "\tagent -->|\"step 2\"| a;",
            "\tagent -->|\"step 2\"| b;",
            "\ta --> __end__;",
            "\tb --> __end__;",
        ] {
            assert!(mermaid.contains(line), "{line} missing:\n{mermaid}");
        }
        // The second run has not finished: it stops at a and b.
        assert!(mermaid.contains("\tagent -. &nbsp;next&nbsp; .-> a;"), "{mermaid}");
        let json = path.to_json();
        assert_eq!(
            json["edges"][0],
            serde_json::json!({"from": "__start__", "to": "agent", "steps": [1, 5], "kind": "ran"})
        );
    }

    #[test]
    fn forks_leave_the_abandoned_branch_out() {
        let mut newest_first = vec![
            entry(2, "loop", &["b"], &[]),
            entry(1, "fork", &[], &["b"]),
            entry(2, "loop", &["b"], &[]),
            entry(1, "loop", &["a"], &["b"]),
            entry(0, "loop", &["__start__"], &["a"]),
            entry(-1, "input", &[], &[]),
        ];
        let ids = ["c2b", "c1b", "c2", "c1", "c0", "c-1"];
        let parents = [Some("c1b"), Some("c1"), Some("c1"), Some("c0"), Some("c-1"), None];
        for ((e, id), parent) in newest_first.iter_mut().zip(ids).zip(parents) {
            e.checkpoint_id = id.to_owned();
            e.parent_id = parent.map(str::to_owned);
        }
        let chain: Vec<String> = lineage(&newest_first).into_iter().map(|e| e.checkpoint_id).collect();
        assert_eq!(chain, ["c-1", "c0", "c1", "c1b", "c2b"]);
        let path = Path::from_entries(&lineage(&newest_first));
        let edges: Vec<(&str, &str)> = path.edges.iter().map(|e| (e.from.as_str(), e.to.as_str())).collect();
        assert_eq!(edges, [("__start__", "a"), ("a", "b"), ("b", "__end__")]);
    }

    #[test]
    fn odd_names_get_safe_ids_and_drawings_get_highlights() {
        let path =
            Path::from_entries(&[entry(-1, "input", &[], &[]), entry(1, "loop", &["call model"], &[])]);
        let mermaid = path.to_mermaid("t");
        assert!(
            mermaid.contains("\tcall_model(\"call model\")")
                && mermaid.contains("__start__ -->|\"step 1\"| call_model;")
        );
        let drawing = "graph TD;\n\t__start__ --> call_model;\n";
        let marked = highlight(drawing, &["__start__".into(), "call model".into()]);
        assert!(marked.ends_with("\tclass call_model ran;\n"), "{marked}");
        assert_eq!(highlight("sequenceDiagram\n", &["x".into()]), "sequenceDiagram\n");
    }
}
