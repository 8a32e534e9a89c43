//! The `memory-agent` binary with `OTEL_EXPORTER_OTLP_ENDPOINT` set, as an operator runs it:
//! every turn of its demo arrives at a real OTLP/gRPC receiver as one complete span tree (the
//! run, its nodes, the memory calls inside them and, on MySQL, the saver's calls with their
//! I/O), together with the metrics derived from those spans.

mod support;

use std::collections::HashMap;

use memory_agent::{AFTER_COMPACTION, SCRIPT};
use mnemograph_telemetry::{CHECKPOINT_DURATION, GRAPH_NODE_DURATION, GRAPH_RUN_DURATION, MEMORY_DURATION};
use mnemograph_test::otlp::{Receiver, Spans};

/// What the binary printed and the receiver got.
struct Exported {
    spans: Spans,
    metric_names: Vec<String>,
}

/// Runs the binary's demo exporting to a fresh receiver, with `env` on top of the embedded
/// defaults (word-hashing embeddings: the spans, not the recall, are under test here). `None`
/// when the binary could not reach a server it was given.
async fn run_exporting(env: &[(&str, &str)]) -> Option<Exported> {
    let receiver = Receiver::grpc().await;
    let mut cmd = support::binary();
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()).env("MEMORY_EMBEDDINGS", "hashing");
    for (k, v) in env {
        cmd.env(k, v);
    }
    // The receiver serves on this runtime while the binary runs.
    let out = tokio::task::spawn_blocking(move || cmd.output()).await.unwrap().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("cannot reach") {
        support::unavailable("a server", &stderr);
        return None;
    }
    assert!(out.status.success(), "{}\n{stderr}", String::from_utf8_lossy(&out.stdout));
    let metrics = receiver.received.metrics();
    let metric_names = metrics
        .iter()
        .flat_map(|r| &r.resource_metrics)
        .flat_map(|rm| &rm.scope_metrics)
        .flat_map(|sm| &sm.metrics)
        .map(|m| m.name.clone())
        .collect();
    Some(Exported { spans: Spans::from_requests(&receiver.received.traces()), metric_names })
}

/// One `graph.run` root per turn of the demo, each with its thread, its three nodes, and the
/// memory calls inside the nodes that make them; the user id only as a hash.
fn check_turns(spans: &Spans) {
    let names = spans.names();
    for resource in spans.resources() {
        assert_eq!(resource.get("service.name").map(String::as_str), Some("memory-agent"), "{resource:?}");
        assert_eq!(resource.get("service.version").map(String::as_str), Some(env!("CARGO_PKG_VERSION")));
    }
    assert!(spans.orphans().is_empty(), "every parent was exported: {names:?}");

    let runs: Vec<_> = spans.named("graph.run").collect();
    let turns: Vec<_> = SCRIPT.iter().chain(AFTER_COMPACTION).collect();
    assert_eq!(runs.len(), turns.len(), "one run per turn: {names:?}");
    let mut threads: Vec<String> = runs.iter().map(|r| Spans::attributes(r)["thread_id"].clone()).collect();
    let mut expected: Vec<String> =
        turns.iter().map(|(user, session, _)| format!("{user}:{session}")).collect();
    threads.sort();
    expected.sort();
    assert_eq!(threads, expected);

    let mut user_hashes: HashMap<String, Vec<String>> = HashMap::new();
    for run in &runs {
        assert!(run.parent_span_id.is_empty(), "a run is a root");
        let attributes = Spans::attributes(run);
        assert!(!attributes["run_id"].is_empty(), "{attributes:?}");
        assert_eq!(attributes.get("graph.name").map(String::as_str), Some("LangGraph"), "{attributes:?}");
        let user = attributes["thread_id"].split(':').next().unwrap().to_owned();
        assert!(spans.all().iter().filter(|s| s.trace_id == run.trace_id).all(|s| {
            s.span_id == run.span_id || spans.ancestors(s).iter().any(|a| a.span_id == run.span_id)
        }));

        let nodes = spans.descendants_named(run, "graph.node");
        let node_names: Vec<String> = nodes.iter().map(|n| Spans::attributes(n)["node"].clone()).collect();
        assert_eq!(node_names.len(), 3, "{node_names:?}");
        for expected in ["retrieve", "call_model", "save_memory"] {
            assert!(node_names.iter().any(|n| n == expected), "{expected} in {node_names:?}");
        }
        for node in &nodes {
            let a = Spans::attributes(node);
            assert_eq!(a.get("outcome").map(String::as_str), Some("ok"), "{a:?}");
            assert!(!a.contains_key("attempt"), "recorded on a retry only: {a:?}");
            let retrieves = spans.descendants_named(node, "memory.retrieve");
            let saves = spans.descendants_named(node, "memory.save");
            match a["node"].as_str() {
                "retrieve" => assert_eq!((retrieves.len(), saves.len()), (1, 0), "{names:?}"),
                // The update path looks for the memories a new one supersedes before saving it.
                "save_memory" => assert_eq!(saves.len(), 1, "{names:?}"),
                _ => assert!(retrieves.is_empty() && saves.is_empty(), "{names:?}"),
            }
            for call in retrieves.iter().chain(&saves) {
                let call = Spans::attributes(call);
                assert_eq!(call.get("memory.backend").map(String::as_str), Some("embedded"), "{call:?}");
                if call.contains_key("memory.top_k") {
                    assert!(call.contains_key("memory.hits"), "{call:?}");
                    let hash = call["user.hash"].clone();
                    assert_eq!(hash.len(), 16, "{call:?}");
                    user_hashes.entry(user.clone()).or_default().push(hash);
                } else {
                    assert!(call["memory.count"].parse::<u64>().unwrap() >= 1, "{call:?}");
                }
            }
        }
    }
    // The hash groups one user's calls and tells users apart.
    assert_eq!(user_hashes.len(), 2, "{user_hashes:?}");
    let per_user: Vec<&String> = user_hashes
        .values()
        .map(|hashes| {
            assert!(hashes.windows(2).all(|w| w[0] == w[1]), "{hashes:?}");
            &hashes[0]
        })
        .collect();
    assert_ne!(per_user[0], per_user[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_exports_one_span_tree_per_turn() {
    let exported = run_exporting(&[]).await.expect("no server is used");
    check_turns(&exported.spans);
    // `info` by default: the supersteps and saver calls stay out.
    let names = exported.spans.names();
    assert!(!names.iter().any(|n| *n == "superstep" || n.starts_with("checkpoint.")), "{names:?}");
    for metric in [GRAPH_RUN_DURATION, GRAPH_NODE_DURATION, MEMORY_DURATION] {
        assert!(exported.metric_names.iter().any(|m| m == metric), "{metric}: {:?}", exported.metric_names);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_mysql_the_savers_calls_are_exported_with_their_io() {
    let (database, url) = support::mysql_database();
    // The saver spans are `debug`: the export filter lets mnemograph-core's through.
    let env = [("MYSQL_URL", url.as_str()), ("MNEMOGRAPH_OTEL_FILTER", "info,mnemograph_core=debug")];
    let exported = run_exporting(&env).await;
    support::drop_database(&url, &database).await;
    let Some(exported) = exported else { return };
    let spans = &exported.spans;
    check_turns(spans);
    let names = spans.names();
    for run in spans.named("graph.run") {
        let commits = spans.descendants_named(run, "checkpoint.commit");
        assert!(!commits.is_empty(), "{names:?}");
        for commit in commits {
            let a = Spans::attributes(commit);
            assert_eq!(a.get("db.system").map(String::as_str), Some("mysql"), "{a:?}");
            assert!(a["bytes"].parse::<u64>().unwrap() > 0, "{a:?}");
            assert!(a["round_trips"].parse::<u64>().unwrap() >= 1, "{a:?}");
            assert!(!a["thread_id"].is_empty(), "{a:?}");
        }
        let supersteps = spans.descendants_named(run, "superstep");
        assert!(!supersteps.is_empty(), "{names:?}");
    }
    // Reads reach MySQL, or are answered by the layer remembering what this process stored,
    // whose spans carry no I/O at all.
    let reads: Vec<_> = spans.named("checkpoint.get_tuple").map(Spans::attributes).collect();
    let (backend, remembered): (Vec<_>, Vec<_>) = reads.iter().partition(|a| a.contains_key("db.system"));
    assert!(!backend.is_empty(), "{names:?}");
    for a in backend {
        assert_eq!(a["db.system"], "mysql", "{a:?}");
        assert!(a["round_trips"].parse::<u64>().unwrap() >= 1, "{a:?}");
        assert!(a.contains_key("bytes"), "{a:?}");
    }
    assert!(remembered.iter().all(|a| !a.contains_key("bytes") && !a.contains_key("round_trips")));
    assert!(exported.metric_names.iter().any(|m| m == CHECKPOINT_DURATION), "{:?}", exported.metric_names);
}
