//! [`Snapshot`]: one checkpoint with every value decoded, whichever store and read path it came
//! from. Built from a saver's [`CheckpointTuple`], or, when a saver refuses to read a thread
//! because a stored value is corrupt, from the raw document and `(type, bytes)` pairs, so one bad
//! blob shows up as undecodable instead of hiding the whole thread.

use std::collections::BTreeMap;

use mnemograph_checkpoint::checkpoint::CheckpointTuple;
use serde_json::{json, Map, Value as Json};

use crate::decode::Decoded;

/// Channel → version.
pub type Versions = BTreeMap<String, String>;

/// A checkpoint, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The thread.
    pub thread_id: String,
    /// The namespace (`""`: the root graph).
    pub checkpoint_ns: String,
    /// The checkpoint id.
    pub checkpoint_id: String,
    /// The checkpoint it follows.
    pub parent_id: Option<String>,
    /// ISO-8601 creation time.
    pub ts: String,
    /// `metadata.step`, when present.
    pub step: Option<i64>,
    /// `metadata.source` (`input`, `loop`, `update`, `fork`), when present.
    pub source: Option<String>,
    /// The whole metadata object.
    pub metadata: Map<String, Json>,
    /// Channel values.
    pub channel_values: BTreeMap<String, Decoded>,
    /// Channel versions.
    pub channel_versions: Versions,
    /// Node → the versions of its triggers it last ran on.
    pub versions_seen: BTreeMap<String, Versions>,
    /// Channels updated by the step that wrote the checkpoint, when recorded.
    pub updated_channels: Option<Vec<String>>,
    /// Writes saved against this checkpoint.
    pub pending_writes: Vec<Write>,
    /// What was wrong with the stored record itself (only on the raw read path).
    pub problems: Vec<String>,
}

/// A pending write.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    /// The task that wrote it.
    pub task_id: String,
    /// The channel written.
    pub channel: String,
    /// The value.
    pub value: Decoded,
}

/// A checkpoint as stored, before decoding: what the raw read paths hand to
/// [`Snapshot::from_raw`].
#[derive(Debug, Clone, Default)]
pub struct RawCheckpoint {
    /// The thread.
    pub thread_id: String,
    /// The namespace.
    pub checkpoint_ns: String,
    /// The checkpoint id.
    pub checkpoint_id: String,
    /// The parent id.
    pub parent_id: Option<String>,
    /// The `checkpoint` document (inline values, versions, `versions_seen`, ...).
    pub document: Json,
    /// The metadata object.
    pub metadata: Json,
    /// `(channel, value)` of the blobs the document's versions point at.
    pub blobs: Vec<(String, Decoded)>,
    /// `(task_id, idx, channel, value)` of the pending writes.
    pub writes: Vec<(String, i64, String, Decoded)>,
    /// Problems found while reading the record.
    pub problems: Vec<String>,
}

impl Snapshot {
    /// Decodes a saver's tuple.
    pub fn from_tuple(t: &CheckpointTuple) -> Self {
        let cp = &t.checkpoint;
        let metadata = t.metadata.to_json().into_map();
        Self {
            thread_id: t.config.thread_id.clone(),
            checkpoint_ns: t.config.checkpoint_ns.clone(),
            checkpoint_id: cp.id.clone(),
            parent_id: t.parent_config.as_ref().and_then(|p| p.checkpoint_id.clone()),
            ts: cp.ts.clone(),
            step: Some(t.metadata.step),
            source: Some(t.metadata.source.as_str().to_owned()),
            metadata,
            channel_values: cp
                .channel_values
                .iter()
                .map(|(k, v)| (k.to_string(), Decoded::from_channel_value(v)))
                .collect(),
            channel_versions: owned(&cp.channel_versions),
            versions_seen: cp.versions_seen.iter().map(|(k, v)| (k.to_string(), owned(v))).collect(),
            updated_channels: cp.updated_channels.as_ref().map(|u| u.iter().map(|c| c.to_string()).collect()),
            pending_writes: t
                .pending_writes
                .iter()
                .map(|w| Write {
                    task_id: w.task_id.clone(),
                    channel: w.channel.clone(),
                    value: Decoded::from_channel_value(&w.value),
                })
                .collect(),
            problems: Vec::new(),
        }
    }

    /// Builds a snapshot from a stored record, leniently: a missing or malformed part becomes a
    /// [`problem`](Self::problems) and an empty field, never an error.
    pub fn from_raw(raw: RawCheckpoint) -> Self {
        let mut problems = raw.problems;
        let doc = raw.document.as_object().cloned().unwrap_or_else(|| {
            problems.push("the checkpoint document is not a JSON object".to_owned());
            Map::new()
        });
        let metadata = raw.metadata.as_object().cloned().unwrap_or_else(|| {
            problems.push("the metadata is not a JSON object".to_owned());
            Map::new()
        });
        let mut channel_values: BTreeMap<String, Decoded> = match doc.get("channel_values") {
            Some(Json::Object(inline)) => {
                inline.iter().map(|(k, v)| (k.clone(), Decoded::Value(v.clone()))).collect()
            }
            _ => BTreeMap::new(),
        };
        channel_values.extend(raw.blobs);
        let mut writes = raw.writes;
        // The order of LangGraph's savers: by task, then index.
        writes.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        Self {
            thread_id: raw.thread_id,
            checkpoint_ns: raw.checkpoint_ns,
            checkpoint_id: raw.checkpoint_id,
            parent_id: raw.parent_id,
            ts: doc.get("ts").and_then(Json::as_str).unwrap_or_default().to_owned(),
            step: metadata.get("step").and_then(Json::as_i64),
            source: metadata.get("source").and_then(Json::as_str).map(str::to_owned),
            channel_versions: versions(doc.get("channel_versions")),
            versions_seen: match doc.get("versions_seen") {
                Some(Json::Object(seen)) => {
                    seen.iter().map(|(k, v)| (k.clone(), versions(Some(v)))).collect()
                }
                _ => BTreeMap::new(),
            },
            updated_channels: doc
                .get("updated_channels")
                .and_then(Json::as_array)
                .map(|items| items.iter().filter_map(Json::as_str).map(str::to_owned).collect()),
            metadata,
            channel_values,
            pending_writes: writes
                .into_iter()
                .map(|(task_id, _, channel, value)| Write { task_id, channel, value })
                .collect(),
            problems,
        }
    }

    /// The nodes scheduled to run after this checkpoint: LangGraph's `branch:to:<node>` trigger
    /// channels that hold a value.
    pub fn next(&self) -> Vec<String> {
        self.channel_values.keys().filter_map(|c| c.strip_prefix("branch:to:")).map(str::to_owned).collect()
    }

    /// The whole checkpoint as JSON, the form `show --json` prints.
    pub fn to_json(&self) -> Json {
        let values: Map<String, Json> =
            self.channel_values.iter().map(|(k, v)| (k.clone(), v.to_json())).collect();
        let writes: Vec<Json> = self
            .pending_writes
            .iter()
            .map(|w| json!({ "task_id": w.task_id, "channel": w.channel, "value": w.value.to_json() }))
            .collect();
        let mut out = json!({
            "thread_id": self.thread_id,
            "checkpoint_ns": self.checkpoint_ns,
            "checkpoint_id": self.checkpoint_id,
            "parent_checkpoint_id": self.parent_id,
            "ts": self.ts,
            "metadata": self.metadata,
            "channel_values": values,
            "channel_versions": self.channel_versions,
            "versions_seen": self.versions_seen,
            "updated_channels": self.updated_channels,
            "pending_writes": writes,
            "next": self.next(),
        });
        if !self.problems.is_empty() {
            out["problems"] = json!(self.problems);
        }
        out
    }
}

/// A `{channel: version}` object, leniently (integer versions of old savers become text).
fn versions(json: Option<&Json>) -> Versions {
    let Some(Json::Object(map)) = json else { return Versions::new() };
    map.iter()
        .filter_map(|(k, v)| match v {
            Json::String(s) => Some((k.clone(), s.clone())),
            Json::Number(n) => Some((k.clone(), n.to_string())),
            _ => None,
        })
        .collect()
}

/// The saver's shared names and versions as the owned texts a snapshot holds.
fn owned(versions: &mnemograph_checkpoint::checkpoint::ChannelVersions) -> Versions {
    versions.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_records_decode_leniently() {
        let raw = RawCheckpoint {
            thread_id: "t".into(),
            checkpoint_id: "c2".into(),
            parent_id: Some("c1".into()),
            document: json!({
                "v": 4, "ts": "2026-01-02T03:04:05+00:00", "id": "c2",
                "channel_values": {"count": 3, "branch:to:agent": null},
                "channel_versions": {"count": "00000000000000000000000000000002.0", "messages": 7},
                "versions_seen": {"agent": {"count": "1"}},
            }),
            metadata: json!({"source": "loop", "step": 1, "parents": {}}),
            blobs: vec![("messages".into(), Decoded::undecodable("pickle", "unknown", b"x"))],
            writes: vec![
                ("b".into(), 0, "messages".into(), Decoded::Value(json!([]))),
                ("a".into(), 1, "count".into(), Decoded::Value(json!(4))),
                ("a".into(), 0, "count".into(), Decoded::Value(json!(3))),
            ],
            ..RawCheckpoint::default()
        };
        let snap = Snapshot::from_raw(raw);
        assert_eq!((snap.step, snap.source.as_deref()), (Some(1), Some("loop")));
        assert_eq!(snap.channel_versions["messages"], "7");
        assert_eq!(snap.next(), ["agent"]);
        let order: Vec<(&str, Json)> =
            snap.pending_writes.iter().map(|w| (w.task_id.as_str(), w.value.to_json())).collect();
        assert_eq!(order, [("a", json!(3)), ("a", json!(4)), ("b", json!([]))]);
        let json = snap.to_json();
        assert_eq!(json["channel_values"]["messages"]["$undecodable"]["type"], "pickle");
        assert!(snap.problems.is_empty());

        let broken = Snapshot::from_raw(RawCheckpoint { document: json!("?"), ..RawCheckpoint::default() });
        assert_eq!(broken.problems.len(), 2);
    }
}
