//! The human-readable output of each command.

use std::io::Write;

use serde_json::Value as Json;

use super::summary::Entry;
use super::width::{pad, truncate, width};
use crate::snapshot::Snapshot;
use crate::source::ThreadInfo;

/// Widest node column before it is cut.
const NODES_COLUMN: usize = 24;

/// `2026-01-02T03:04:05.123456+00:00` as `2026-01-02 03:04:05`.
pub fn short_time(ts: &str) -> String {
    ts.get(..19).unwrap_or(ts).replacen('T', " ", 1)
}

/// `threads`: a table, most recently active first.
///
/// # Errors
/// When writing fails.
pub fn threads(out: &mut dyn Write, threads: &[ThreadInfo]) -> std::io::Result<()> {
    if threads.is_empty() {
        return writeln!(out, "no threads");
    }
    // Ids are never cut: they are what the other commands take.
    let id_width = threads.iter().map(|t| width(&t.thread_id)).max().unwrap_or(0).max("THREAD".len());
    writeln!(
        out,
        "{}  CHECKPOINTS  NS  STEP  LATEST (UTC)         LATEST CHECKPOINT",
        pad("THREAD", id_width)
    )?;
    for t in threads {
        let step = t.latest_step.map_or_else(|| "?".to_owned(), |s| s.to_string());
        let time = t.latest_ts.as_deref().map_or_else(|| "?".to_owned(), short_time);
        writeln!(
            out,
            "{}  {:>11}  {:>2}  {step:>4}  {}  {}",
            pad(&t.thread_id, id_width),
            t.checkpoints,
            t.namespaces,
            pad(&time, 19),
            t.latest_id
        )?;
    }
    Ok(())
}

/// `history`: the optional drawing, then one aligned line per checkpoint, newest first.
///
/// # Errors
/// When writing fails.
pub fn history(out: &mut dyn Write, entries: &[Entry], drawing: Option<&str>) -> std::io::Result<()> {
    if let Some(drawing) = drawing {
        writeln!(out, "{}\n", drawing.trim_end())?;
    }
    let steps: Vec<String> =
        entries.iter().map(|e| e.step.map_or_else(|| "?".to_owned(), |s| s.to_string())).collect();
    let nodes: Vec<String> = entries.iter().map(|e| truncate(&e.nodes.join(","), NODES_COLUMN)).collect();
    let step_width = steps.iter().map(String::len).max().unwrap_or(1);
    let source_width = entries.iter().map(|e| e.source.as_deref().unwrap_or("?").len()).max().unwrap_or(1);
    let nodes_width = nodes.iter().map(|n| width(n)).max().unwrap_or(0);
    for ((e, step), node) in entries.iter().zip(&steps).zip(&nodes) {
        let line = format!(
            "{}  step {}  {}  {}  {}",
            e.checkpoint_id,
            pad(step, step_width),
            pad(e.source.as_deref().unwrap_or("?"), source_width),
            pad(node, nodes_width),
            e.summary_line()
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// `show`: a header with the summary, then each part of the checkpoint as pretty JSON.
///
/// # Errors
/// When writing fails.
pub fn show(out: &mut dyn Write, snap: &Snapshot, entry: &Entry) -> std::io::Result<()> {
    let ns = if snap.checkpoint_ns.is_empty() { "(root)" } else { &snap.checkpoint_ns };
    writeln!(out, "thread      {}", snap.thread_id)?;
    writeln!(out, "namespace   {ns}")?;
    writeln!(out, "checkpoint  {}", snap.checkpoint_id)?;
    writeln!(out, "parent      {}", snap.parent_id.as_deref().unwrap_or("-"))?;
    let step = snap.step.map_or_else(|| "?".to_owned(), |s| s.to_string());
    writeln!(out, "step        {step} ({})", snap.source.as_deref().unwrap_or("?"))?;
    writeln!(out, "time        {} UTC", short_time(&snap.ts))?;
    if !entry.nodes.is_empty() {
        writeln!(out, "written by  {}", entry.nodes.join(", "))?;
    }
    for change in &entry.changes {
        writeln!(out, "change      {} {}", change.channel, change.summary)?;
    }
    for pending in &entry.pending {
        writeln!(out, "pending     {pending}")?;
    }
    if !entry.next.is_empty() {
        writeln!(out, "next        {}", entry.next.join(", "))?;
    }
    for problem in &snap.problems {
        writeln!(out, "problem     {problem}")?;
    }
    let json = snap.to_json();
    for part in ["channel_values", "channel_versions", "versions_seen", "metadata"] {
        writeln!(out, "\n{part}:")?;
        writeln!(out, "{}", pretty(&json[part]))?;
    }
    writeln!(out, "\npending_writes ({}):", snap.pending_writes.len())?;
    for w in &snap.pending_writes {
        writeln!(out, "- task {}  channel {}", w.task_id, w.channel)?;
        writeln!(out, "{}", indent(&pretty(&w.value.to_json()), "  "))?;
    }
    Ok(())
}

/// Pretty JSON (non-ASCII text stays readable: serde_json does not escape it).
pub fn pretty(value: &Json) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines().map(|l| format!("{prefix}{l}")).collect::<Vec<_>>().join("\n")
}
