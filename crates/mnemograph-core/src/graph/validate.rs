//! `compile()`'s checks: every problem is collected, none panics.

use super::builder::StateGraph;
use super::flow;
use crate::constants::{END, START};
use crate::error::{Error, GraphIssue, Result};
use crate::State;

/// The graph's warnings, or every error found. The flow checks behind the warnings run only on a
/// graph without errors, whose every name exists.
pub(crate) fn validate<S: State, C>(g: &StateGraph<S, C>) -> Result<Vec<GraphIssue>> {
    let mut issues = g.issues.clone();
    let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
    if names.is_empty() {
        issues.push(GraphIssue::Empty);
    }
    for name in &names {
        // `:` and `|` separate task namespaces (`node:<task_id>|child:<id>`), so LangGraph
        // reserves them too.
        if name.is_empty() || *name == START || *name == END || name.contains([':', '|']) {
            issues.push(GraphIssue::ReservedName((*name).to_owned()));
        }
    }
    let known = |n: &str| names.contains(&n);
    let check = |from: &str, to: &str, issues: &mut Vec<GraphIssue>| {
        if from == END {
            issues.push(GraphIssue::EdgeFromEnd);
        } else if from != START && !known(from) {
            issues.push(unknown(from, to, from, &names));
        }
        if to == START {
            issues.push(GraphIssue::EdgeToStart);
        } else if to != END && !known(to) {
            issues.push(unknown(from, to, to, &names));
        }
    };
    for (from, to) in &g.edges {
        check(from, to, &mut issues);
    }
    for (sources, to) in &g.joins {
        for from in sources {
            check(from, to, &mut issues);
        }
    }
    for b in &g.branches {
        if b.source != START && !known(&b.source) {
            issues.push(unknown(&b.source, "<conditional>", &b.source, &names));
        }
        for (_, to) in b.path_map.iter().flatten() {
            check(&b.source, to, &mut issues);
        }
    }
    let has_entry = g.edges.iter().any(|(f, _)| f == START)
        || g.joins.iter().any(|(f, _)| f.iter().any(|s| s == START))
        || g.branches.iter().any(|b| b.source == START);
    if !has_entry && !names.is_empty() {
        issues.push(GraphIssue::NoEntryPoint);
    }
    for (when, list) in [("before", &g.interrupt_before), ("after", &g.interrupt_after)] {
        for node in list {
            if !known(node) {
                issues.push(GraphIssue::UnknownBreakpoint { when, node: node.clone() });
            }
        }
    }
    issues.dedup();
    if issues.is_empty() {
        Ok(flow::warnings(g))
    } else {
        Err(Error::InvalidGraph(issues))
    }
}

fn unknown(from: &str, to: &str, missing: &str, names: &[&str]) -> GraphIssue {
    GraphIssue::UnknownNode {
        from: from.to_owned(),
        to: to.to_owned(),
        missing: missing.to_owned(),
        did_you_mean: closest(missing, names),
    }
}

/// The existing name closest to `name` by edit distance, if it is plausibly a typo.
fn closest(name: &str, names: &[&str]) -> Option<String> {
    names
        .iter()
        .map(|n| (levenshtein(name, n), *n))
        .filter(|(d, n)| *d <= 2.max(n.len() / 3))
        .min()
        .map(|(_, n)| n.to_owned())
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb { prev } else { 1 + prev.min(row[j]).min(cur) };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(closest("retrive", &["retrieve", "call_model"]), Some("retrieve".into()));
        assert_eq!(closest("zzz", &["retrieve", "call_model"]), None);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
    }
}
