//! Lowering a validated [`StateGraph`] into the plan the engine runs: one channel per state field,
//! one `branch:to:<node>` trigger per node, a channel per join, and the task-id inputs each node
//! needs precomputed.

use std::collections::HashMap;
use std::sync::Arc;

use super::builder::StateGraph;
use crate::constants::{END, PULL, START, TASKS};
use crate::pregel::plan::{Branch, ChannelKind, ChannelSpec, Layout, NodeDef};
use crate::State;

/// Lowers a validated graph into the engine's plan.
pub(super) fn lower<S: State, C>(g: StateGraph<S, C>) -> Layout<S, C> {
    let mut channels: Vec<ChannelSpec> = S::FIELDS
        .iter()
        .enumerate()
        .map(|(i, f)| ChannelSpec { name: f.name.into(), kind: ChannelKind::Field(i) })
        .collect();
    let add = |channels: &mut Vec<ChannelSpec>, name: String, kind| {
        channels.push(ChannelSpec { name: name.into(), kind });
        channels.len() - 1
    };
    let start_channel = add(&mut channels, START.to_owned(), ChannelKind::Start);

    // Node 0 is START; user nodes follow in insertion order.
    let mut nodes: Vec<NodeDef<S, C>> = vec![NodeDef {
        name: START.into(),
        node: None,
        triggers: vec![start_channel],
        trigger_names: Arc::from([]),
        trigger_order: Vec::new(),
        pull_suffix: Vec::new(),
        pull_path: Arc::from(""),
        edges: Vec::new(),
        joins: Vec::new(),
        branches: Vec::new(),
        retry: None,
        blocking: false,
    }];
    let mut route_channel = vec![start_channel];
    for spec in g.nodes {
        let kind = if spec.options.defer { ChannelKind::Deferred } else { ChannelKind::Branch };
        let ch = add(&mut channels, format!("branch:to:{}", spec.name), kind);
        route_channel.push(ch);
        let name: Arc<str> = spec.name.into();
        nodes.push(NodeDef {
            trigger_names: Arc::from([]),
            trigger_order: Vec::new(),
            pull_suffix: Vec::new(),
            pull_path: Arc::from(""),
            name,
            node: Some(spec.node),
            triggers: vec![ch],
            edges: Vec::new(),
            joins: Vec::new(),
            branches: Vec::new(),
            retry: spec.options.retry,
            blocking: spec.options.blocking,
        });
    }
    let node_index: HashMap<Arc<str>, usize> =
        nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), i)).collect();

    for (from, to) in g.edges {
        if to == END {
            continue;
        }
        let (f, t) = (node_index[from.as_str()], node_index[to.as_str()]);
        let ch = route_channel[t];
        if !nodes[f].edges.contains(&ch) {
            nodes[f].edges.push(ch);
        }
    }
    for (sources, to) in g.joins {
        // LangGraph's name: `join:<a>+<b>:<c>`, sources in the order given.
        let name = format!("join:{}:{}", sources.join("+"), to);
        let ch = add(&mut channels, name, ChannelKind::Join { sources: sources.clone() });
        if to != END {
            let t = node_index[to.as_str()];
            nodes[t].triggers.push(ch);
        }
        for (bit, s) in sources.iter().enumerate() {
            nodes[node_index[s.as_str()]].joins.push((ch, 1 << bit));
        }
    }
    for b in g.branches {
        let f = node_index[b.source.as_str()];
        nodes[f]
            .branches
            .push(Branch { path: b.path, path_map: b.path_map.map(|m| m.into_iter().collect()) });
    }
    for n in &mut nodes {
        let mut names: Vec<Arc<str>> = n.triggers.iter().map(|t| channels[*t].name.clone()).collect();
        names.sort();
        n.pull_suffix = [n.name.as_bytes(), PULL.as_bytes()]
            .into_iter()
            .chain(names.iter().map(|t| t.as_bytes()))
            .flatten()
            .copied()
            .collect();
        n.pull_path = format!("~{}, {}", PULL, n.name).into();
        n.trigger_names = names.into();
        n.trigger_order = (0..n.triggers.len()).collect();
        n.trigger_order.sort_by(|a, b| channels[n.triggers[*a]].name.cmp(&channels[n.triggers[*b]].name));
    }
    let tasks_channel = add(&mut channels, TASKS.to_owned(), ChannelKind::Tasks);
    let mut is_trigger = vec![false; channels.len()];
    for n in &nodes {
        for t in &n.triggers {
            is_trigger[*t] = true;
        }
    }
    is_trigger[tasks_channel] = true;
    let channel_index = channels.iter().enumerate().map(|(i, c)| (c.name.clone(), i)).collect();
    let mut channel_order: Vec<usize> = (0..channels.len()).collect();
    channel_order.sort_by(|a, b| channels[*a].name.cmp(&channels[*b].name));
    let interrupt_before = g.interrupt_before.iter().map(|n| node_index[n.as_str()]).collect();
    let interrupt_after = g.interrupt_after.iter().map(|n| node_index[n.as_str()]).collect();
    Layout {
        channels,
        channel_index,
        channel_order,
        nodes,
        node_index,
        route_channel,
        start_channel,
        tasks_channel,
        is_trigger,
        interrupt_before,
        interrupt_after,
    }
}
