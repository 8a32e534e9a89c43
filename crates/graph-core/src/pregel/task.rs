//! Tasks: one node run in one superstep, its deterministic id, and where its output goes.

use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_128;

use crate::command::{Goto, NodeOutput, Push};
use crate::error::{BoxError, Error, Result};
use crate::graph::builder::END;
use crate::graph::compiled::{Layout, NodeDef};
use crate::graph::node::BoxedNode;
use crate::retry::RetryPolicy;
use crate::runtime::Runtime;
use crate::state::{State, StateWrite};

/// LangGraph's task kinds (`PULL`: triggered by channels; `PUSH`: created by a [`Push`]).
pub(crate) const PULL: &str = "__pregel_pull";
pub(crate) const PUSH: &str = "__pregel_push";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskKind {
    Pull,
    Push,
}

/// What one task wrote: state updates, edge channels, join bits, pushes.
pub(crate) struct TaskWrites<S: State> {
    pub(crate) state: Vec<StateWrite<S::Update>>,
    pub(crate) channels: Vec<usize>,
    pub(crate) joins: Vec<(usize, u64)>,
    pub(crate) pushes: Vec<Push<S>>,
}

impl<S: State> TaskWrites<S> {
    pub(crate) fn empty() -> Self {
        Self { state: Vec::new(), channels: Vec::new(), joins: Vec::new(), pushes: Vec::new() }
    }
}

pub(crate) struct Task<S: State> {
    pub(crate) node: usize,
    pub(crate) kind: TaskKind,
    pub(crate) id: Arc<str>,
    /// LangGraph's `task_path_str`; writes are applied in this order.
    pub(crate) path: String,
    /// The pushed argument of a push task; pull tasks read the step's state.
    pub(crate) input: Option<S>,
    /// The trigger channels that fired.
    pub(crate) triggers: Vec<String>,
    /// Set once the task finished (or its writes were restored from a checkpoint).
    pub(crate) writes: Option<TaskWrites<S>>,
}

impl<S: State> Task<S> {
    pub(crate) fn pull<C>(
        def: &NodeDef<S, C>,
        node: usize,
        checkpoint_id: &str,
        checkpoint_ns: &str,
        step: i64,
    ) -> Self {
        // LangGraph hashes all of the node's triggers (sorted), not only the ones that fired.
        let triggers: Vec<String> = def.trigger_names.iter().map(|t| t.to_string()).collect();
        let ns = child_ns(checkpoint_ns, &def.name);
        let step_s = step.to_string();
        let mut parts: Vec<&str> = vec![&ns, &step_s, &def.name, PULL];
        parts.extend(triggers.iter().map(String::as_str));
        Self {
            node,
            kind: TaskKind::Pull,
            id: task_id(checkpoint_id, &parts).into(),
            path: format!("~{PULL}, {}", def.name),
            input: None,
            triggers,
            writes: None,
        }
    }

    pub(crate) fn push<C>(
        def: &NodeDef<S, C>,
        node: usize,
        index: usize,
        arg: S,
        checkpoint_id: &str,
        checkpoint_ns: &str,
        step: i64,
    ) -> Self {
        let ns = child_ns(checkpoint_ns, &def.name);
        let (step_s, idx_s) = (step.to_string(), index.to_string());
        Self {
            node,
            kind: TaskKind::Push,
            id: task_id(checkpoint_id, &[&ns, &step_s, &def.name, PUSH, &idx_s]).into(),
            path: format!("~{PUSH}, {index:010}"),
            input: Some(arg),
            triggers: vec![crate::graph::compiled::TASKS.to_owned()],
            writes: None,
        }
    }
}

pub(crate) fn child_ns(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}|{name}")
    }
}

/// LangGraph's task id: xxh3-128 over the checkpoint id's bytes followed by the parts, with no
/// separators, rendered as a UUID. Deterministic, so a resumed run (in any process, or in Python)
/// recognises the pending writes of tasks that already finished.
pub(crate) fn task_id(checkpoint_id: &str, parts: &[&str]) -> String {
    let mut buf: Vec<u8> = Vec::with_capacity(64);
    let hex: String = checkpoint_id.chars().filter(|c| *c != '-').collect();
    // A checkpoint id is a UUID; anything else (hand-made ids in tests) is hashed as text.
    match decode_hex(&hex) {
        Some(bytes) => buf.extend(bytes),
        None => buf.extend(checkpoint_id.as_bytes()),
    }
    for p in parts {
        buf.extend_from_slice(p.as_bytes());
    }
    let h = format!("{:032x}", xxh3_128(&buf));
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.is_ascii() {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect()
}

/// Turns a node's output into channel writes: its updates, its static edges and joins, its
/// conditional edges (evaluated on `snapshot` plus its own updates, as LangGraph's fresh local
/// read does), and its command destinations.
///
/// # Errors
/// [`Error::UnknownNode`] for a route to a node that does not exist; [`Error::InvalidUpdate`]
/// when the node's own updates conflict.
pub(crate) fn route<S: State, C>(
    layout: &Layout<S, C>,
    node: usize,
    snapshot: &S,
    output: NodeOutput<S>,
) -> Result<TaskWrites<S>> {
    let def = &layout.nodes[node];
    let mut w = TaskWrites { state: output.writes, ..TaskWrites::empty() };
    w.channels.extend(def.edges.iter().copied());
    w.joins.extend(def.joins.iter().copied());
    for goto in output.goto {
        add_goto(layout, &mut w, goto, None)?;
    }
    if !def.branches.is_empty() {
        let mut local = snapshot.clone();
        if !w.state.is_empty() {
            local
                .apply(w.state.clone())
                .map_err(|source| Error::InvalidUpdate { nodes: format!("{:?}", &*def.name), source })?;
        }
        for b in &def.branches {
            for goto in (b.path)(&local).0 {
                add_goto(layout, &mut w, goto, b.path_map.as_ref())?;
            }
        }
    }
    Ok(w)
}

fn add_goto<S: State, C>(
    layout: &Layout<S, C>,
    w: &mut TaskWrites<S>,
    goto: Goto<S>,
    path_map: Option<&std::collections::HashMap<String, String>>,
) -> Result<()> {
    match goto {
        Goto::Node(key) => {
            let target = match path_map {
                Some(map) => map.get(&key).ok_or_else(|| Error::UnknownNode(key.clone()))?.as_str(),
                None => key.as_str(),
            };
            if target == END {
                return Ok(());
            }
            let t = layout.node(target).ok_or_else(|| Error::UnknownNode(target.to_owned()))?;
            let ch = layout.route_channel[t];
            if !w.channels.contains(&ch) {
                w.channels.push(ch);
            }
        }
        Goto::Push(p) => {
            if layout.node(&p.node).is_none() {
                return Err(Error::UnknownNode(p.node));
            }
            w.pushes.push(p);
        }
    }
    Ok(())
}

/// Runs one node attempt after another until it succeeds, its retry policy gives up, or the
/// error is not retryable.
pub(crate) async fn execute<S: State, C>(
    node: BoxedNode<S, C>,
    input: S,
    runtime: Runtime<C>,
    retry: Option<RetryPolicy>,
    timeout: Option<std::time::Duration>,
) -> std::result::Result<NodeOutput<S>, BoxError> {
    let Some(policy) = retry else {
        // No retry: hand the input over without the clone a retry would need.
        return attempt(&node, input, runtime, timeout).await;
    };
    let mut n = 1;
    loop {
        match attempt(&node, input.clone(), runtime.clone(), timeout).await {
            Ok(out) => return Ok(out),
            // An interrupt is an outcome, never retried.
            Err(e)
                if n < policy.max_attempts
                    && super::run::as_interrupt(&e).is_none()
                    && policy.should_retry(&e) =>
            {
                let wait = policy.backoff(n);
                tracing::warn!(node = runtime.node(), attempt = n, ?wait, error = %e, "node failed; retrying");
                tokio::time::sleep(wait).await;
                n += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

async fn attempt<S: State, C>(
    node: &BoxedNode<S, C>,
    input: S,
    runtime: Runtime<C>,
    timeout: Option<std::time::Duration>,
) -> std::result::Result<NodeOutput<S>, BoxError> {
    let fut = node.0.call(input, runtime);
    match timeout {
        None => fut.await,
        Some(d) => match tokio::time::timeout(d, fut).await {
            Ok(r) => r,
            Err(_) => Err(format!("node attempt timed out after {d:?}").into()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test vectors computed with Python LangGraph 1.2.24's `_xxhash_str`.
    #[test]
    fn task_ids_match_langgraph() {
        let cp = "1f1ec79d-c684-6681-8000-584e5eeaf542";
        assert_eq!(
            task_id(cp, &["bot", "1", "bot", PULL, "branch:to:bot"]),
            "be311120-beb1-d687-0d3f-82e41fe5462a"
        );
        assert_eq!(
            task_id(cp, &["c", "3", "c", PULL, "branch:to:c", "join:a+b:c"]),
            "9e5f956b-6713-4dd0-2649-40045ab2f773"
        );
        assert_eq!(task_id(cp, &["work", "2", "work", PUSH, "0"]), "bab74653-db10-ad80-981f-69455686f5b9");
    }

    #[test]
    fn task_ids_are_deterministic_uuids() {
        let a = task_id("1f1ec79d-c684-6681-8000-584e5eeaf542", &["bot", "0", "bot", PULL, "branch:to:bot"]);
        let b = task_id("1f1ec79d-c684-6681-8000-584e5eeaf542", &["bot", "0", "bot", PULL, "branch:to:bot"]);
        let c = task_id("1f1ec79d-c684-6681-8000-584e5eeaf542", &["bot", "1", "bot", PULL, "branch:to:bot"]);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 36);
        assert_eq!(a.matches('-').count(), 4);
    }
}
