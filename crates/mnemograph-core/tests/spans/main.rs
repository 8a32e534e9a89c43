//! What a run records with `tracing`: a `graph.run` span (run id, thread, outcome) holding a
//! `superstep` span per step, each holding a `graph.node` span per task (node, task id, attempt,
//! outcome), so any subscriber, an OpenTelemetry exporter among them, sees the tree of a run.
//!
//! These tests live in their own binary, and each installs its subscriber before it runs a
//! graph: `tracing` caches per call site whether anyone listens, and a test on another thread
//! that reaches a call site with no subscriber installed can cache "nobody" while a test here
//! installs one.

#[path = "../engine/support.rs"]
#[allow(dead_code)]
mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mnemograph_core::prelude::*;
use mnemograph_core::BoxError;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

use crate::support::*;

/// A span: its id, its parent's id, its name and fields.
#[derive(Debug, Clone)]
struct Seen {
    id: u64,
    parent: Option<u64>,
    name: String,
    fields: BTreeMap<String, String>,
}

/// Keeps every span, in creation order.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let parent = ctx.span(id).and_then(|s| s.parent()).map(|p| p.id().into_u64());
        let name = attrs.metadata().name().to_owned();
        self.0.lock().unwrap().push(Seen { id: id.into_u64(), parent, name, fields });
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some(seen) = spans.iter_mut().find(|s| s.id == id.into_u64()) {
            values.record(&mut Fields(&mut seen.fields));
        }
    }
}

impl Spans {
    fn named(&self, name: &str) -> Vec<Seen> {
        self.0.lock().unwrap().iter().filter(|s| s.name == name).cloned().collect()
    }
    fn by_id(&self, id: Option<u64>) -> Option<Seen> {
        self.0.lock().unwrap().iter().find(|s| Some(s.id) == id).cloned()
    }
}

/// `START -> a -> b`; `b` fails on its first attempt and is retried.
fn flaky() -> StateGraph<S> {
    let calls = Arc::new(AtomicUsize::new(0));
    let b = move |_s: S| {
        let first = calls.fetch_add(1, Ordering::SeqCst) == 0;
        async move {
            if first {
                return Err::<SUpdate, BoxError>("flaky".into());
            }
            Ok(SUpdate::log(vec!["b".to_owned()]))
        }
    };
    let retry = RetryPolicy::new().max_attempts(2).initial_interval(Duration::from_millis(1));
    StateGraph::<S>::new()
        .add_node("a", logger("a"))
        .add_node_with("b", b, NodeOptions::new().retry(retry))
        .add_edge(START, "a")
        .add_edge("a", "b")
}

#[tokio::test(flavor = "current_thread")]
async fn test_runs_steps_and_nodes_are_nested_spans_with_outcomes() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let graph = flaky().compile().unwrap().with_checkpointer(InMemoryCheckpointer::new());
    let config = RunConfig::thread("t-spans").metadata("run_id", "run-42");
    graph.invoke(SUpdate::default(), &config).await.unwrap();

    let runs = spans.named("graph.run");
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    assert_eq!(run.fields["run_id"], "run-42");
    assert_eq!(run.fields["thread_id"], "t-spans");
    assert_eq!(run.fields["outcome"], "ok");
    assert_eq!(run.fields["steps"], "2");

    let nodes = spans.named("graph.node");
    let names: Vec<&str> = nodes.iter().map(|n| n.fields["node"].as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    for node in &nodes {
        let step = spans.by_id(node.parent).expect("a node's parent span");
        assert_eq!(step.name, "superstep", "{node:?}");
        assert_eq!(step.parent, Some(run.id), "a step belongs to its run");
        assert_eq!(node.fields["outcome"], "ok");
        assert!(!node.fields["task_id"].is_empty());
    }
    assert!(!nodes[0].fields.contains_key("attempt"), "a first attempt is not recorded");
    assert_eq!(nodes[1].fields["attempt"], "2");
}

#[tokio::test(flavor = "current_thread")]
async fn test_a_failed_run_and_its_node_say_so_and_runs_get_their_own_ids() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let failing = |_s: S| async { Err::<SUpdate, BoxError>("broken".into()) };
    let graph = StateGraph::<S>::new().add_node("x", failing).add_edge(START, "x").compile().unwrap();
    graph.invoke(SUpdate::default(), &RunConfig::default()).await.unwrap_err();
    graph.invoke(SUpdate::default(), &RunConfig::default()).await.unwrap_err();

    let runs = spans.named("graph.run");
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().all(|r| r.fields["outcome"] == "error"), "{runs:?}");
    assert_ne!(runs[0].fields["run_id"], runs[1].fields["run_id"], "each run gets a fresh id");
    let nodes = spans.named("graph.node");
    assert!(nodes.iter().all(|n| n.fields["outcome"] == "error"), "{nodes:?}");
}

/// An in-memory saver that reports its I/O as a backend does.
struct Reporting(InMemoryCheckpointer);

impl mnemograph_core::checkpoint::backend::Delegate for Reporting {
    fn saver(&self) -> &dyn mnemograph_core::checkpoint::DynCheckpointer {
        mnemograph_core::checkpoint::backend::record_io("test-db", 128, 1);
        &self.0
    }
}

/// The ancestors of `span`, nearest first, by name.
fn ancestors(spans: &Spans, span: &Seen) -> Vec<String> {
    let mut names = Vec::new();
    let mut parent = span.parent;
    while let Some(p) = spans.by_id(parent) {
        names.push(p.name.clone());
        parent = p.parent;
    }
    names
}

#[tokio::test(flavor = "current_thread")]
async fn test_saver_calls_are_spans_of_their_run_with_what_the_saver_reports() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let graph = flaky()
        .compile()
        .unwrap()
        .with_name("support-bot")
        .with_checkpointer(Reporting(InMemoryCheckpointer::new()));
    assert_eq!(graph.name(), "support-bot");
    graph.invoke(SUpdate::default(), &RunConfig::thread("t-saver")).await.unwrap();

    let run = spans.named("graph.run").pop().expect("a run span");
    assert_eq!(run.fields["graph.name"], "support-bot");
    let reads = spans.named("checkpoint.get_tuple");
    assert_eq!(reads.len(), 1, "the run reads its thread once: {reads:?}");
    assert_eq!(reads[0].parent, Some(run.id));
    let commits = spans.named("checkpoint.commit");
    // The input checkpoint and one per step (a and b).
    assert_eq!(commits.len(), 3, "{commits:?}");
    // A step of one task sends its writes with the next commit; two tasks in one step save
    // theirs as each finishes.
    assert!(spans.named("checkpoint.put_writes").is_empty());
    let fan_out = StateGraph::<S>::new()
        .add_node("x", logger("x"))
        .add_node("y", logger("y"))
        .add_edge(START, "x")
        .add_edge(START, "y")
        .compile()
        .unwrap()
        .with_checkpointer(Reporting(InMemoryCheckpointer::new()));
    fan_out.invoke(SUpdate::default(), &RunConfig::thread("t-saver")).await.unwrap();
    let writes = spans.named("checkpoint.put_writes");
    assert!(!writes.is_empty(), "the fan-out's task writes are saved");
    for span in reads.iter().chain(&commits).chain(&writes) {
        assert!(ancestors(&spans, span).contains(&"graph.run".to_owned()), "{span:?}");
        assert_eq!(span.fields["thread_id"], "t-saver");
        assert_eq!(span.fields["checkpoint_ns"], "");
        assert_eq!(span.fields["db.system"], "test-db", "the saver's report lands on its span");
        assert_eq!((span.fields["bytes"].as_str(), span.fields["round_trips"].as_str()), ("128", "1"));
    }
}

#[tokio::test(flavor = "current_thread")]
async fn test_a_graph_is_named_langgraph_unless_named() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let graph = flaky().compile().unwrap();
    assert_eq!(graph.name(), "LangGraph");
    graph.invoke(SUpdate::default(), &RunConfig::default()).await.unwrap();
    let run = spans.named("graph.run").pop().expect("a run span");
    assert_eq!(run.fields["graph.name"], "LangGraph");
    assert!(spans.named("checkpoint.commit").is_empty(), "no saver, no saver spans");
}

/// Spawned on a multi-thread runtime's workers, each task keeps its `graph.node` span under the
/// step's span, records its attempts, and what the node traces reaches the caller's (thread-local)
/// subscriber under the node's span.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_spawned_tasks_keep_their_spans_under_the_step() {
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let traced = |_s: S| async {
        tracing::info_span!("inside").in_scope(|| {});
        Ok::<_, Error>(SUpdate::log(vec!["traced".to_owned()]))
    };
    let graph = flaky()
        .add_node("traced", traced)
        .add_node_with("blocking", logger("blocking"), NodeOptions::new().blocking())
        .add_edge("a", "traced")
        .add_edge("a", "blocking")
        .compile()
        .unwrap();
    let out = graph.invoke(SUpdate::default(), &RunConfig::default()).await.unwrap();
    assert_eq!(out.log, ["a", "b", "blocking", "traced"]);

    let run = spans.named("graph.run").pop().expect("a run span");
    let nodes = spans.named("graph.node");
    assert_eq!(nodes.len(), 4, "{nodes:?}");
    for node in &nodes {
        let step = spans.by_id(node.parent).expect("a node's parent span");
        assert_eq!(step.name, "superstep", "{node:?}");
        assert_eq!(step.parent, Some(run.id));
        assert_eq!(node.fields["outcome"], "ok");
    }
    let b = nodes.iter().find(|n| n.fields["node"] == "b").unwrap();
    assert_eq!(b.fields["attempt"], "2", "the retried task records its attempt from its worker");
    let inside = spans.named("inside");
    assert_eq!(inside.len(), 1, "a span the node opens reaches the caller's subscriber");
    let parent = spans.by_id(inside[0].parent).unwrap();
    assert_eq!((parent.name.as_str(), parent.fields["node"].as_str()), ("graph.node", "traced"));
}
