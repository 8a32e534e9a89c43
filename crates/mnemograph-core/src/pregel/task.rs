//! Tasks: one node run in one superstep, its deterministic id, and where its output goes.

use std::sync::Arc;

use xxhash_rust::xxh3::xxh3_128;

use super::blocking::on_blocking_thread;
use super::node::BoxedNode;
use super::plan::{Layout, NodeDef};
use crate::command::{Goto, NodeOutput, Push};
use crate::constants::{END, PUSH, TASKS};
use crate::error::{BoxError, Error, Result};
use crate::interrupt::{Interrupt, NodeInterrupt};
use crate::retry::RetryPolicy;
use crate::runtime::Runtime;
use crate::state::StateWrite;
use crate::State;

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
    pub(crate) path: Arc<str>,
    /// The pushed argument of a push task; pull tasks read the step's state.
    pub(crate) input: Option<S>,
    /// The node's trigger channels (LangGraph reports them all, not only those that fired).
    pub(crate) triggers: Arc<[Arc<str>]>,
    /// Set once the task finished (or its writes were restored from a checkpoint).
    pub(crate) writes: Option<TaskWrites<S>>,
}

/// What every task id of one superstep starts with: the checkpoint id as LangGraph feeds it to the
/// hash (its 16 UUID bytes), computed once per step rather than once per task.
pub(crate) struct IdPrefix(Vec<u8>);

impl IdPrefix {
    pub(crate) fn new(checkpoint_id: &str) -> Self {
        // A checkpoint id is a UUID; anything else (hand-made ids in tests) is hashed as text.
        match uuid::Uuid::try_parse(checkpoint_id) {
            Ok(u) => Self(u.as_bytes().to_vec()),
            Err(_) => Self(checkpoint_id.as_bytes().to_vec()),
        }
    }
}

impl<S: State> Task<S> {
    pub(crate) fn pull<C>(
        def: &NodeDef<S, C>,
        node: usize,
        prefix: &IdPrefix,
        checkpoint_ns: &str,
        step: i64,
    ) -> Self {
        let ns = task_ns_root(checkpoint_ns, &def.name);
        let step = step.to_string();
        // `pull_suffix` is `name ‖ "__pregel_pull" ‖ sorted triggers`, fixed per node.
        let parts: [&[u8]; 3] = [ns.as_bytes(), step.as_bytes(), &def.pull_suffix];
        Self {
            node,
            kind: TaskKind::Pull,
            id: task_id(&prefix.0, &parts),
            path: Arc::clone(&def.pull_path),
            input: None,
            triggers: Arc::clone(&def.trigger_names),
            writes: None,
        }
    }

    pub(crate) fn push<C>(
        def: &NodeDef<S, C>,
        (node, index): (usize, usize),
        arg: S,
        prefix: &IdPrefix,
        checkpoint_ns: &str,
        step: i64,
    ) -> Self {
        let ns = task_ns_root(checkpoint_ns, &def.name);
        let (step, idx) = (step.to_string(), index.to_string());
        let parts: [&[u8]; 5] =
            [ns.as_bytes(), step.as_bytes(), def.name.as_bytes(), PUSH.as_bytes(), idx.as_bytes()];
        Self {
            node,
            kind: TaskKind::Push,
            id: task_id(&prefix.0, &parts),
            // LangGraph's `(PUSH, idx, False)`: the last element says the task is not a call,
            // and a bool renders as an integer.
            path: format!("~{PUSH}, {index:010}, 0000000000").into(),
            input: Some(arg),
            triggers: Arc::from([Arc::from(TASKS)]),
            writes: None,
        }
    }
}

/// The namespace a task id is computed from: the node's name at the root, `parent|name` below.
fn task_ns_root<'a>(parent: &str, name: &'a str) -> std::borrow::Cow<'a, str> {
    if parent.is_empty() {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(format!("{parent}|{name}"))
    }
}

pub(crate) fn child_ns(parent: &str, name: &str) -> String {
    task_ns_root(parent, name).into_owned()
}

/// LangGraph's task id: xxh3-128 over the checkpoint id's bytes followed by the parts, with no
/// separators, rendered as a UUID. Deterministic, so a resumed run (in any process, or in Python)
/// recognises the pending writes of tasks that already finished.
pub(crate) fn task_id(prefix: &[u8], parts: &[&[u8]]) -> Arc<str> {
    let len = prefix.len() + parts.iter().map(|p| p.len()).sum::<usize>();
    let mut buf: Vec<u8> = Vec::with_capacity(len);
    buf.extend_from_slice(prefix);
    for p in parts {
        buf.extend_from_slice(p);
    }
    let mut out = [0u8; uuid::fmt::Hyphenated::LENGTH];
    Arc::from(&*uuid::Uuid::from_u128(xxh3_128(&buf)).hyphenated().encode_lower(&mut out))
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
    // LangGraph's order: the node's own destinations, then its static edges (a destination that
    // is also an edge is written twice, as there).
    for goto in output.goto {
        add_goto(layout, &mut w, goto, None)?;
    }
    w.channels.extend(def.edges.iter().copied());
    w.joins.extend(def.joins.iter().copied());
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

/// A task ready to run: everything [`execute`] needs, gathered before any future is built, so a
/// step with a single task can await it in place instead of allocating its future.
pub(crate) struct Job<S: State, C> {
    /// The task's position in the step.
    pub(crate) index: usize,
    /// The node to run.
    pub(crate) node: BoxedNode<S, C>,
    /// Its input.
    pub(crate) input: S,
    /// Its runtime argument.
    pub(crate) runtime: Runtime<C>,
    /// Its retry policy.
    pub(crate) retry: Option<RetryPolicy>,
    /// The run's per-node timeout.
    pub(crate) timeout: Option<std::time::Duration>,
    /// The task's span.
    pub(crate) span: tracing::Span,
    /// Whether the node runs on a blocking thread.
    pub(crate) blocking: bool,
}

impl<S: State, C: Send + Sync + 'static> Job<S, C> {
    /// Runs the task; returns its position with its outcome and the answers to interrupts it
    /// used (read from its scope once it has finished).
    pub(crate) async fn run(self) -> JobResult<S> {
        let Job { index, node, input, runtime, retry, timeout, span, blocking } = self;
        let scope = runtime.scope_arc();
        let task =
            tracing::Instrument::instrument(execute(node, input, runtime, retry, timeout), span.clone());
        let result = if blocking { on_blocking_thread(task).await } else { task.await };
        let outcome = match &result {
            Ok(_) => "ok",
            Err(e) if as_interrupt(e).is_some() => "interrupted",
            Err(_) => "error",
        };
        span.record("outcome", outcome);
        let resumed = scope.scratchpad.lock().resume_write();
        (index, result, resumed)
    }
}

/// What [`Job::run`] returns: the task's position, its outcome, and the answers it used.
pub(crate) type JobResult<S> =
    (usize, std::result::Result<NodeOutput<S>, BoxError>, Option<Vec<serde_json::Value>>);

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
            Err(e) if n < policy.max_attempts && as_interrupt(&e).is_none() && policy.should_retry(&e) => {
                let wait = policy.backoff(n);
                tracing::warn!(node = runtime.node(), attempt = n, ?wait, error = %e, "node failed; retrying");
                tokio::time::sleep(wait).await;
                n += 1;
                tracing::Span::current().record("attempt", n);
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

/// The interrupt a node's error carries, if it is one (returned bare, or inside mnemograph-core's
/// `Error`, as a node using `mnemograph_core::Result` produces with `?`).
pub(crate) fn as_interrupt(e: &BoxError) -> Option<Vec<Interrupt>> {
    let ni = e.downcast_ref::<NodeInterrupt>().or_else(|| match e.downcast_ref::<Error>() {
        Some(Error::Interrupt(ni)) => Some(ni),
        _ => None,
    });
    match ni {
        Some(NodeInterrupt::Pending(i)) => Some(vec![i.clone()]),
        Some(NodeInterrupt::Subgraph(list)) => Some(list.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::constants::PULL;

    fn id(checkpoint_id: &str, parts: &[&str]) -> String {
        let parts: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
        task_id(&IdPrefix::new(checkpoint_id).0, &parts).to_string()
    }

    /// Test vectors computed with Python LangGraph 1.2.24's `_xxhash_str`.
    #[test]
    fn task_ids_match_langgraph() {
        let cp = "1f1ec79d-c684-6681-8000-584e5eeaf542";
        assert_eq!(
            id(cp, &["bot", "1", "bot", PULL, "branch:to:bot"]),
            "be311120-beb1-d687-0d3f-82e41fe5462a"
        );
        assert_eq!(
            id(cp, &["c", "3", "c", PULL, "branch:to:c", "join:a+b:c"]),
            "9e5f956b-6713-4dd0-2649-40045ab2f773"
        );
        assert_eq!(id(cp, &["work", "2", "work", PUSH, "0"]), "bab74653-db10-ad80-981f-69455686f5b9");
    }

    #[test]
    fn task_ids_are_deterministic_uuids() {
        let a = id("1f1ec79d-c684-6681-8000-584e5eeaf542", &["bot", "0", "bot", PULL, "branch:to:bot"]);
        let b = id("1f1ec79d-c684-6681-8000-584e5eeaf542", &["bot", "0", "bot", PULL, "branch:to:bot"]);
        let c = id("1f1ec79d-c684-6681-8000-584e5eeaf542", &["bot", "1", "bot", PULL, "branch:to:bot"]);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 36);
        assert_eq!(a.matches('-').count(), 4);
    }
}
