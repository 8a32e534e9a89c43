//! What one checkpoint did, in a few words: the nodes that wrote it, a short description of each
//! changed channel (`messages +1 (ai: "根据你上周…")`, `retrieved = 3 items`), its notable pending
//! writes and the nodes it schedules next. Text is cut with [`truncate`], on character
//! boundaries and counting CJK characters as two columns.

use std::collections::HashSet;

use serde_json::{json, Value as Json};

use super::width::truncate;
use crate::decode::Decoded;
use crate::snapshot::Snapshot;

/// Display width kept from a message's text.
const MESSAGE_WIDTH: usize = 28;
/// Display width kept from other strings and compact JSON.
const VALUE_WIDTH: usize = 32;

/// A checkpoint summarised against its parent.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The checkpoint id.
    pub checkpoint_id: String,
    /// Its parent's id.
    pub parent_id: Option<String>,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// `metadata.source`.
    pub source: Option<String>,
    /// Creation time.
    pub ts: String,
    /// Nodes that ran in the step that produced it.
    pub nodes: Vec<String>,
    /// One line per changed channel.
    pub changes: Vec<Change>,
    /// Interrupts, errors and resumes saved against it, and, for the newest checkpoint, the
    /// writes of tasks that already finished in the unfinished next step.
    pub pending: Vec<String>,
    /// Nodes scheduled after it.
    pub next: Vec<String>,
}

/// One changed channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The channel (state field).
    pub channel: String,
    /// What happened to it, e.g. `+1 (ai: "…")` or `= 3 items`.
    pub summary: String,
}

impl Entry {
    /// Summarises `cur`; `parent` is the checkpoint before it (when known), `newest` whether
    /// no later checkpoint exists in the namespace.
    pub fn new(cur: &Snapshot, parent: Option<&Snapshot>, newest: bool) -> Self {
        Self {
            checkpoint_id: cur.checkpoint_id.clone(),
            parent_id: cur.parent_id.clone(),
            step: cur.step,
            source: cur.source.clone(),
            ts: cur.ts.clone(),
            nodes: writers(cur, parent),
            changes: changes(cur, parent),
            pending: pending(cur, newest),
            next: cur.next(),
        }
    }

    /// The changes, pending writes and next nodes as one line.
    pub fn summary_line(&self) -> String {
        let mut parts: Vec<String> =
            self.changes.iter().map(|c| format!("{} {}", c.channel, c.summary)).collect();
        parts.extend(self.pending.iter().cloned());
        if !self.next.is_empty() {
            parts.push(format!("next: {}", self.next.join(", ")));
        }
        parts.join("; ")
    }

    /// The entry as JSON.
    pub fn to_json(&self) -> Json {
        let changes: Vec<Json> =
            self.changes.iter().map(|c| json!({"channel": c.channel, "summary": c.summary})).collect();
        json!({
            "checkpoint_id": self.checkpoint_id,
            "parent_checkpoint_id": self.parent_id,
            "step": self.step,
            "source": self.source,
            "ts": self.ts,
            "nodes": self.nodes,
            "changes": changes,
            "pending": self.pending,
            "next": self.next,
        })
    }
}

/// Entries for a history listed newest first; the parent of each is looked up in the list.
pub fn entries(history: &[Snapshot]) -> Vec<Entry> {
    history
        .iter()
        .enumerate()
        .map(|(i, cur)| {
            let parent = cur.parent_id.as_ref().and_then(|p| history.iter().find(|s| &s.checkpoint_id == p));
            Entry::new(cur, parent, i == 0)
        })
        .collect()
}

/// Nodes whose `versions_seen` moved since the parent: the tasks of the step that wrote `cur`.
pub fn writers(cur: &Snapshot, parent: Option<&Snapshot>) -> Vec<String> {
    if cur.source.as_deref() == Some("input") {
        return Vec::new();
    }
    let Some(parent) = parent else { return Vec::new() };
    cur.versions_seen
        .iter()
        .filter(|(node, _)| !matches!(node.as_str(), "__input__" | "__interrupt__"))
        .filter(|(node, seen)| parent.versions_seen.get(*node) != Some(*seen))
        .map(|(node, _)| node.clone())
        .collect()
}

/// Whether a channel is engine bookkeeping (`branch:to:x`, `__start__`, `join:...`) rather than
/// a state field.
fn is_internal(channel: &str) -> bool {
    channel.starts_with("__") || channel.contains(':')
}

/// The changed state fields of `cur`, described.
pub fn changes(cur: &Snapshot, parent: Option<&Snapshot>) -> Vec<Change> {
    if cur.source.as_deref() == Some("input") {
        // The input waits in `__start__` as `{field: update}` until step 0 applies it.
        let Some(Json::Object(input)) = cur.channel_values.get("__start__").and_then(Decoded::json) else {
            return Vec::new();
        };
        return input
            .iter()
            .map(|(field, update)| Change { channel: field.clone(), summary: describe_update(None, update) })
            .collect();
    }
    let channels: Vec<&String> = match &cur.updated_channels {
        Some(updated) => updated.iter().collect(),
        None => cur
            .channel_versions
            .iter()
            .filter(|(c, v)| parent.and_then(|p| p.channel_versions.get(*c)) != Some(*v))
            .map(|(c, _)| c)
            .collect(),
    };
    let before = |c: &str| parent.and_then(|p| p.channel_values.get(c)).and_then(Decoded::json);
    channels
        .into_iter()
        .filter(|c| !is_internal(c))
        .map(|c| {
            let summary = match cur.channel_values.get(c) {
                None => "cleared".to_owned(),
                Some(Decoded::Undecodable { kind, error, .. }) => {
                    format!("= <undecodable {kind}: {}>", truncate(error, VALUE_WIDTH))
                }
                Some(Decoded::Value(value)) => describe_update(before(c), value),
            };
            Change { channel: c.clone(), summary }
        })
        .collect()
}

/// A new value of a channel, relative to the old one when both are message lists.
fn describe_update(before: Option<&Json>, value: &Json) -> String {
    let old = before.and_then(Json::as_array).filter(|items| is_message_list(items));
    match value.as_array() {
        Some(items) if is_message_list(items) && (old.is_some() || !items.is_empty()) => {
            message_diff(old.map_or(&[][..], Vec::as_slice), items)
        }
        _ => format!("= {}", describe(value)),
    }
}

/// Whether every item looks like a LangChain message (`type` and `content`).
fn is_message_list(items: &[Json]) -> bool {
    items.iter().all(|m| {
        m.get("content").is_some()
            && m.get("type").and_then(Json::as_str).is_some_and(|t| {
                matches!(t, "human" | "ai" | "tool" | "system" | "remove" | "chat" | "function" | "developer")
            })
    })
}

/// `+added -removed ~edited (last added message)` between two message lists, matched by id.
fn message_diff(old: &[Json], new: &[Json]) -> String {
    let id = |m: &Json| m.get("id").and_then(Json::as_str).map(str::to_owned);
    let old_ids: HashSet<String> = old.iter().filter_map(id).collect();
    let new_ids: HashSet<String> = new.iter().filter_map(id).collect();
    // Messages without an id can only be matched by position.
    let added: Vec<&Json> = new
        .iter()
        .enumerate()
        .filter(|(i, m)| id(m).map_or(*i >= old.len(), |id| !old_ids.contains(&id)))
        .map(|(_, m)| m)
        .collect();
    let removed = old.iter().filter(|m| id(m).is_some_and(|id| !new_ids.contains(&id))).count();
    let edited: Vec<&Json> = new
        .iter()
        .filter(|m| id(m).is_some_and(|i| old.iter().any(|o| id(o).as_ref() == Some(&i) && o != *m)))
        .collect();
    let mut counts = Vec::new();
    if !added.is_empty() {
        counts.push(format!("+{}", added.len()));
    }
    if removed > 0 {
        counts.push(format!("-{removed}"));
    }
    if !edited.is_empty() {
        counts.push(format!("~{}", edited.len()));
    }
    if counts.is_empty() {
        return format!("unchanged ({} messages)", new.len());
    }
    match added.last().or(edited.last()) {
        Some(m) => format!("{} ({})", counts.join(" "), describe_message(m)),
        None => counts.join(" "),
    }
}

/// `ai: "text…" → tool(args…)`, `tool search: "result…"`, `human: "question…"`.
pub fn describe_message(m: &Json) -> String {
    let kind = m.get("type").and_then(Json::as_str).unwrap_or("?");
    let text = content_text(m.get("content").unwrap_or(&Json::Null));
    let id = m.get("id").and_then(Json::as_str).unwrap_or_default();
    let mut out = match kind {
        "remove" if id == "__remove_all__" => return "remove all".to_owned(),
        "remove" => return format!("remove {}", truncate(id, VALUE_WIDTH)),
        "tool" => match m.get("name").and_then(Json::as_str) {
            Some(name) => format!("tool {name}"),
            None => "tool".to_owned(),
        },
        other => other.to_owned(),
    };
    let calls: Vec<String> = m
        .get("tool_calls")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let name = c.get("name").and_then(Json::as_str).unwrap_or("?");
            format!("{name}({})", c.get("args").map(brief).unwrap_or_default())
        })
        .collect();
    if !text.is_empty() || calls.is_empty() {
        out.push_str(&format!(": \"{}\"", truncate(&text, MESSAGE_WIDTH)));
    }
    if !calls.is_empty() {
        out.push_str(&format!(" → {}", calls.join(", ")));
    }
    out
}

/// The text of a message's content: a string, or the `text` of its blocks (other blocks as
/// `[type]`).
fn content_text(content: &Json) -> String {
    match content {
        Json::String(s) => s.clone(),
        Json::Array(blocks) => blocks
            .iter()
            .map(|b| match b {
                Json::String(s) => s.clone(),
                _ => match b.get("text").and_then(Json::as_str) {
                    Some(t) => t.to_owned(),
                    None => format!("[{}]", b.get("type").and_then(Json::as_str).unwrap_or("block")),
                },
            })
            .collect::<Vec<_>>()
            .join(" "),
        Json::Null => String::new(),
        other => compact(other),
    }
}

/// A value in a few words: strings quoted and cut, lists counted (with a preview of scalars),
/// maps by their keys.
pub fn describe(value: &Json) -> String {
    match value {
        Json::String(s) => format!("\"{}\"", truncate(s, VALUE_WIDTH)),
        Json::Array(items) => {
            let noun = if items.len() == 1 { "item" } else { "items" };
            let scalars: Option<Vec<String>> = items
                .iter()
                .take(3)
                .map(|v| match v {
                    Json::Number(n) => Some(n.to_string()),
                    Json::String(s) => Some(format!("\"{}\"", truncate(s, 12))),
                    Json::Bool(b) => Some(b.to_string()),
                    _ => None,
                })
                .collect();
            match scalars.filter(|s| !s.is_empty()) {
                Some(preview) => {
                    let more = if items.len() > 3 { ", …" } else { "" };
                    format!("{} {noun} ({}{more})", items.len(), preview.join(", "))
                }
                None => format!("{} {noun}", items.len()),
            }
        }
        Json::Object(map) => {
            let keys: Vec<&str> = map.keys().take(4).map(String::as_str).collect();
            let more = if map.len() > 4 { ", …" } else { "" };
            format!("{{{}{more}}}", keys.join(", "))
        }
        other => other.to_string(),
    }
}

/// Interrupts, errors and resumes always; other writes only on the newest checkpoint, where they
/// are the finished tasks of a step that has not completed (elsewhere they just repeat the next
/// checkpoint).
fn pending(cur: &Snapshot, newest: bool) -> Vec<String> {
    // What stopped the step first, then how it was resumed, then finished tasks' writes.
    let rank = |channel: &str| match channel {
        "__error__" => 0,
        "__interrupt__" => 1,
        "__resume__" => 2,
        _ => 3,
    };
    let mut writes: Vec<&crate::snapshot::Write> = cur.pending_writes.iter().collect();
    writes.sort_by_key(|w| rank(&w.channel));
    writes
        .into_iter()
        .filter_map(|w| {
            let value = w.value.json();
            let shown = |v: Option<&Json>| v.map_or_else(|| "<undecodable>".to_owned(), brief);
            Some(match w.channel.as_str() {
                "__interrupt__" => {
                    // A list of `Interrupt {value, id}`; show what was asked.
                    let asked: Vec<String> = match value {
                        Some(Json::Array(items)) => {
                            items.iter().map(|i| shown(Some(i.get("value").unwrap_or(i)))).collect()
                        }
                        other => vec![shown(other)],
                    };
                    format!("interrupt: {}", asked.join(", "))
                }
                "__error__" => format!("error: {}", shown(value)),
                // Resume values are stored as a list, one per interrupt of the task.
                "__resume__" => match value {
                    Some(Json::Array(items)) if items.len() == 1 => {
                        format!("resume: {}", shown(items.first()))
                    }
                    other => format!("resume: {}", shown(other)),
                },
                "__scheduled__" => return None,
                channel if newest && !is_internal(channel) => {
                    format!(
                        "pending {channel} {}",
                        value.map_or_else(|| "<undecodable>".to_owned(), |v| describe_update(None, v))
                    )
                }
                _ => return None,
            })
        })
        .collect()
}

/// Compact JSON text.
fn compact(value: &Json) -> String {
    value.to_string()
}

/// A value as an argument list reads: a small map of scalars as `key="value", n=3`, a string
/// quoted, anything else as compact JSON; cut to a short width.
pub fn brief(value: &Json) -> String {
    match value {
        Json::String(s) => format!("\"{}\"", truncate(s, VALUE_WIDTH)),
        Json::Object(map)
            if !map.is_empty() && map.len() <= 3 && map.values().all(|v| !v.is_object() && !v.is_array()) =>
        {
            let each = (VALUE_WIDTH / map.len()).max(12);
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| match v {
                    Json::String(s) => format!("{k}=\"{}\"", truncate(s, each)),
                    other => format!("{k}={other}"),
                })
                .collect();
            parts.join(", ")
        }
        other => truncate(&compact(other), VALUE_WIDTH),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::snapshot::RawCheckpoint;

    fn human(id: &str, text: &str) -> Json {
        json!({"type": "human", "content": text, "id": id})
    }

    fn ai(id: &str, text: &str) -> Json {
        json!({"type": "ai", "content": text, "id": id, "tool_calls": []})
    }

    /// A checkpoint with `values` (channel → JSON) at version `v`, and `seen` as versions_seen.
    fn snap(id: &str, source: &str, values: Json, seen: Json, writes: Vec<(&str, Json)>) -> Snapshot {
        let versions: serde_json::Map<String, Json> =
            values.as_object().unwrap().keys().map(|k| (k.clone(), json!(format!("{id}.{k}")))).collect();
        let mut document = json!({"ts": "t", "channel_versions": versions});
        document["channel_values"] = values;
        document["versions_seen"] = seen;
        Snapshot::from_raw(RawCheckpoint {
            checkpoint_id: id.into(),
            document,
            metadata: json!({"source": source, "step": 1}),
            writes: writes
                .into_iter()
                .enumerate()
                .map(|(i, (channel, value))| {
                    ("task".to_owned(), i as i64, channel.to_owned(), Decoded::Value(value))
                })
                .collect(),
            ..RawCheckpoint::default()
        })
    }

    #[test]
    fn message_lists_are_diffed_by_id() {
        let old = [human("h1", "你好"), ai("a1", "hi")];
        assert_eq!(
            message_diff(&old, &[human("h1", "你好"), ai("a1", "hi"), ai("a2", "再见")]),
            "+1 (ai: \"再见\")"
        );
        // Trimmed by RemoveMessage(REMOVE_ALL) and rewritten: two gone, one kept, one new.
        let trimmed = [ai("a1", "hi"), human("h2", "下一个问题")];
        assert_eq!(
            message_diff(&[human("h0", "x"), human("h1", "y"), ai("a1", "hi")], &trimmed),
            "+1 -2 (human: \"下一个问题\")"
        );
        assert_eq!(message_diff(&old, &[human("h1", "你好"), ai("a1", "edited")]), "~1 (ai: \"edited\")");
        assert_eq!(message_diff(&old, &old), "unchanged (2 messages)");
        // Without ids, position decides.
        let plain = [json!({"type": "human", "content": "a"}), json!({"type": "ai", "content": "b"})];
        assert_eq!(message_diff(&plain[..1], &plain), "+1 (ai: \"b\")");
        assert_eq!(message_diff(&old, &[]), "-2");
    }

    #[test]
    fn messages_are_described_by_role() {
        let call = json!({"type": "ai", "content": "", "tool_calls": [
            {"name": "search_blog", "args": {"query": "RAG 优化", "top_k": 3}, "id": "c1"}]});
        assert_eq!(describe_message(&call), "ai → search_blog(query=\"RAG 优化\", top_k=3)");
        let both = json!({"type": "ai", "content": [{"type": "text", "text": "查一下"}, {"type": "image_url"}],
            "tool_calls": [{"name": "t", "args": {}}]});
        assert_eq!(describe_message(&both), "ai: \"查一下 [image_url]\" → t({})");
        let tool = json!({"type": "tool", "name": "get_article", "content": "一篇很长的文章\n第二段", "tool_call_id": "c1"});
        assert_eq!(describe_message(&tool), "tool get_article: \"一篇很长的文章 第二段\"");
        assert_eq!(
            describe_message(&json!({"type": "remove", "content": "", "id": "__remove_all__"})),
            "remove all"
        );
        let long = human("h", &"很长的问题".repeat(10));
        assert_eq!(describe_message(&long), "human: \"很长的问题很长的问题很长的…\"");
    }

    #[test]
    fn other_values_are_described_briefly() {
        assert_eq!(describe(&json!([0.82, 0.77, 0.41, 0.1])), "4 items (0.82, 0.77, 0.41, …)");
        assert_eq!(describe(&json!([{"id": 1}])), "1 item");
        assert_eq!(describe(&json!({"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})), "{a, b, c, d, …}");
        assert_eq!(describe(&json!("u42")), "\"u42\"");
        assert_eq!(describe(&json!(null)), "null");
        assert_eq!(brief(&json!({"question": "保存吗？"})), "question=\"保存吗？\"");
        assert_eq!(brief(&json!([1, 2])), "[1,2]");
    }

    #[test]
    fn changes_name_state_fields_only() {
        let parent = snap(
            "1",
            "loop",
            json!({"messages": [human("h1", "q")], "user_id": "u1", "old": 1}),
            json!({}),
            vec![],
        );
        let mut cur = snap(
            "2",
            "loop",
            json!({"messages": [human("h1", "q"), ai("a1", "答")], "user_id": "u1", "branch:to:x": null, "retrieved": [1, 2, 3]}),
            json!({}),
            vec![],
        );
        cur.channel_versions.insert("old".into(), "2.old".into());
        cur.channel_versions.insert("user_id".into(), "1.user_id".into());
        cur.channel_values.insert(
            "broken".into(),
            Decoded::undecodable("pickle", "unknown serializer type `pickle`", b"x"),
        );
        cur.channel_versions.insert("broken".into(), "2".into());
        let found: Vec<String> =
            changes(&cur, Some(&parent)).iter().map(|c| format!("{} {}", c.channel, c.summary)).collect();
        assert_eq!(
            found,
            [
                "broken = <undecodable pickle: unknown serializer type `pickle`>",
                "messages +1 (ai: \"答\")",
                "old cleared",
                "retrieved = 3 items (1, 2, 3)",
            ]
        );
        // The input checkpoint describes what waits in `__start__`.
        let input = snap(
            "0",
            "input",
            json!({"__start__": {"messages": [human("h1", "我们之前讨论过的")], "user_id": "u1"}}),
            json!({}),
            vec![],
        );
        let found: Vec<String> =
            changes(&input, None).iter().map(|c| format!("{} {}", c.channel, c.summary)).collect();
        assert_eq!(found, ["messages +1 (human: \"我们之前讨论过的\")", "user_id = \"u1\""]);
    }

    #[test]
    fn writers_are_the_nodes_whose_versions_seen_moved() {
        let parent =
            snap("1", "loop", json!({}), json!({"__input__": {}, "agent": {"branch:to:agent": "1"}}), vec![]);
        let cur = snap(
            "2",
            "loop",
            json!({}),
            json!({"__input__": {}, "agent": {"branch:to:agent": "1"}, "a": {"x": "2"}, "b": {"x": "2"}}),
            vec![],
        );
        assert_eq!(writers(&cur, Some(&parent)), ["a", "b"]);
        assert!(writers(&cur, None).is_empty(), "unknown without the parent");
        let input = snap("0", "input", json!({}), json!({"x": {"y": "1"}}), vec![]);
        assert!(writers(&input, Some(&parent)).is_empty());
    }

    #[test]
    fn pending_writes_show_interrupts_always_and_task_writes_on_the_newest_only() {
        let writes = vec![
            ("messages", json!([ai("a9", "部分结果")])),
            ("__resume__", json!(["yes"])),
            ("branch:to:tools", json!(null)),
            ("__interrupt__", json!([{"value": {"question": "继续吗？"}, "id": "i1"}])),
            ("__error__", json!("boom")),
        ];
        let cur = snap("1", "loop", json!({"branch:to:tools": null}), json!({}), writes);
        let entry = Entry::new(&cur, None, true);
        assert_eq!(
            entry.pending,
            [
                "error: \"boom\"",
                "interrupt: question=\"继续吗？\"",
                "resume: \"yes\"",
                "pending messages +1 (ai: \"部分结果\")"
            ]
        );
        assert_eq!(entry.next, ["tools"]);
        assert!(entry.summary_line().ends_with("; next: tools"), "{}", entry.summary_line());
        assert_eq!(Entry::new(&cur, None, false).pending.len(), 3);
    }
}
