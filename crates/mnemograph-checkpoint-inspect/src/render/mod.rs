//! Turning checkpoints into output: per-checkpoint summaries, the executed path as Mermaid, and
//! the text and JSON forms of each command.
//!
//! JSON output, and the decoded values in text output, list every object's keys sorted (the
//! order of `serde_json::Map`, since no crate here enables serde_json's `preserve_order`): the
//! same for every run and every source, whatever order the saver stored the keys in.

pub mod graph;
pub mod summary;
pub mod text;
pub mod width;

use serde_json::{json, Value as Json};

use crate::snapshot::Snapshot;
use crate::source::ThreadInfo;
use summary::Entry;

/// `threads --json`: an array of `{thread_id, checkpoints, namespaces, latest_checkpoint_id,
/// latest_step, latest_ts}`.
pub fn threads_json(threads: &[ThreadInfo]) -> Json {
    Json::Array(
        threads
            .iter()
            .map(|t| {
                json!({
                    "thread_id": t.thread_id,
                    "checkpoints": t.checkpoints,
                    "namespaces": t.namespaces,
                    "latest_checkpoint_id": t.latest_id,
                    "latest_step": t.latest_step,
                    "latest_ts": t.latest_ts,
                })
            })
            .collect(),
    )
}

/// `history --json`: `{thread_id, checkpoint_ns, checkpoints: [entry...]}`, plus `graph` (the
/// supplied drawing) when one was given.
pub fn history_json(thread_id: &str, ns: &str, entries: &[Entry], drawing: Option<&str>) -> Json {
    let mut out = json!({
        "thread_id": thread_id,
        "checkpoint_ns": ns,
        "checkpoints": entries.iter().map(Entry::to_json).collect::<Vec<_>>(),
    });
    if let Some(drawing) = drawing {
        out["graph"] = Json::from(drawing);
    }
    out
}

/// `show --json`: the decoded checkpoint plus its `summary` entry.
pub fn show_json(snap: &Snapshot, entry: &Entry) -> Json {
    let mut out = snap.to_json();
    out["summary"] = entry.to_json();
    out
}

/// `graph --json`: `{thread_id, checkpoint_ns, steps, nodes, edges, mermaid}`.
pub fn graph_json(
    thread_id: &str,
    ns: &str,
    oldest_first: &[Entry],
    path: &graph::Path,
    mermaid: &str,
) -> Json {
    let steps: Vec<Json> = oldest_first
        .iter()
        .map(|e| json!({"checkpoint_id": e.checkpoint_id, "step": e.step, "source": e.source, "nodes": e.nodes}))
        .collect();
    let mut out = path.to_json();
    out["thread_id"] = Json::from(thread_id);
    out["checkpoint_ns"] = Json::from(ns);
    out["steps"] = Json::Array(steps);
    out["mermaid"] = Json::from(mermaid);
    out
}
