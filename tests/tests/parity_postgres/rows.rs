//! The rows a thread leaves in Postgres' three tables, in a form two runs can be compared in:
//! blobs and write blobs byte for byte, documents and metadata as JSON, once what is random or
//! time-based is masked (ids, timestamps, the random suffix of channel versions). The rows that
//! differ by design are compared by meaning, as in the MySQL parity target.

use serde_json::{json, Value};
use sqlx::{PgPool, Row};

/// `(case, channel)`: rows whose bytes differ between the two implementations by design (see
/// `docs/getting-started.md`); compared by what they mean instead.
const DOCUMENTED: &[(&str, &str)] = &[
    // A `Push` carries a whole state, so its `Send` argument names every field of the state;
    // Python's names the keys the node (or the command) passed.
    ("push_failure", "__pregel_tasks"),
    ("command", "__pregel_tasks"),
    // An error is stored as its message; Python stores the exception's `repr`.
    ("push_failure", "__error__"),
];

/// A join barrier's value is a Python `set`, whose order follows the process's hash seed.
fn is_set(channel: &str) -> bool {
    channel.starts_with("join:")
}

/// A documented row's blob, or a set, as what both sides agree on.
fn meaning(channel: &str, kind: &str, blob: &[u8]) -> Value {
    if channel == "__error__" {
        return json!("an error");
    }
    let value = mnemograph_core::checkpoint::serde::loads_typed(kind, blob).expect("a stored value decodes");
    let json = value.to_json().expect("a stored value reads as JSON");
    if is_set(channel) {
        let mut members: Vec<String> =
            json.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
        members.sort();
        return json!(members);
    }
    let send = |s: &Value| {
        let arg: serde_json::Map<String, Value> = s["arg"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(_, v)| !v.is_null() && **v != json!([]))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        json!({"node": s["node"], "arg": arg})
    };
    match &json {
        Value::Array(items) => Value::Array(items.iter().map(send).collect()),
        one => send(one),
    }
}

/// Every id-shaped run of bytes (a 36-character uuid or 32 hex digits) zeroed.
fn mask(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
    let is_uuid = |w: &[u8]| {
        w.len() == 36
            && w.iter()
                .enumerate()
                .all(|(i, b)| if [8, 13, 18, 23].contains(&i) { *b == b'-' } else { hex(b) })
    };
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i < out.len() {
        if i + 36 <= out.len() && is_uuid(&out[i..i + 36]) {
            out[i..i + 36].fill(b'0');
            i += 36;
        } else if i + 32 <= out.len() && out[i..i + 32].iter().all(hex) {
            out[i..i + 32].fill(b'0');
            i += 32;
        } else {
            i += 1;
        }
    }
    out
}

fn mask_text(text: &str) -> String {
    String::from_utf8(mask(text.as_bytes())).expect("masking keeps UTF-8")
}

/// A channel version without its random suffix.
fn version_prefix(v: &Value) -> Value {
    match v.as_str() {
        Some(s) => json!(s.split('.').next().unwrap_or(s)),
        None => v.clone(),
    }
}

/// A checkpoint document with its id, timestamp and version suffixes masked.
fn checkpoint_doc(text: &str) -> Value {
    let mut doc: Value = serde_json::from_str(text).expect("a checkpoint document");
    let obj = doc.as_object_mut().expect("an object");
    obj.remove("id");
    obj.remove("ts");
    let mut strip = |versions: &mut Value| {
        if let Value::Object(versions) = versions {
            for v in versions.values_mut() {
                *v = version_prefix(v);
            }
        }
    };
    if let Some(versions) = obj.get_mut("channel_versions") {
        strip(versions);
    }
    if let Some(Value::Object(seen)) = obj.get_mut("versions_seen") {
        seen.values_mut().for_each(&mut strip);
    }
    serde_json::from_str(&mask_text(&doc.to_string())).expect("masked JSON")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Everything `thread` left in the three tables, comparable across runs.
pub(crate) async fn rows(pool: &PgPool, thread: &str, case: &str) -> Value {
    let documented = |channel: &str| DOCUMENTED.contains(&(case, channel)) || is_set(channel);
    let blob_of = |channel: &str, kind: &str, bytes: &[u8]| match documented(channel) {
        true => meaning(channel, kind, bytes),
        false => json!(hex(&mask(bytes))),
    };
    let checkpoints = sqlx::query(
        "SELECT checkpoint_id, parent_checkpoint_id, checkpoint_ns, checkpoint::text, metadata::text \
         FROM checkpoints WHERE thread_id = $1 ORDER BY checkpoint_ns, checkpoint_id",
    )
    .bind(thread)
    .fetch_all(pool)
    .await
    .expect("read checkpoints");
    let ids: Vec<String> = checkpoints.iter().map(|r| r.get::<String, _>(0)).collect();
    let position = |id: &str| ids.iter().position(|i| i == id).map_or(json!(null), |p| json!(p));
    let checkpoints: Vec<Value> = checkpoints
        .iter()
        .map(|r| {
            json!({
                "parent": r.get::<Option<String>, _>(1).as_deref().map(position),
                "ns": mask_text(&r.get::<String, _>(2)),
                "checkpoint": checkpoint_doc(&r.get::<String, _>(3)),
                "metadata": serde_json::from_str::<Value>(&mask_text(&r.get::<String, _>(4))).expect("metadata"),
            })
        })
        .collect();
    let blobs = sqlx::query(
        "SELECT channel, version, type, blob, checkpoint_ns FROM checkpoint_blobs WHERE thread_id = $1 \
         ORDER BY checkpoint_ns, channel, version",
    )
    .bind(thread)
    .fetch_all(pool)
    .await
    .expect("read blobs");
    let blobs: Vec<Value> = blobs
        .iter()
        .map(|r| {
            let (channel, kind) = (r.get::<String, _>(0), r.get::<String, _>(2));
            json!({
                "ns": mask_text(&r.get::<String, _>(4)),
                "channel": channel,
                "version": version_prefix(&json!(r.get::<String, _>(1))),
                "type": kind,
                "blob": r.get::<Option<Vec<u8>>, _>(3).map(|b| blob_of(&channel, &kind, &b)),
            })
        })
        .collect();
    let writes = sqlx::query(
        "SELECT checkpoint_id, task_path, idx, channel, type, blob, checkpoint_ns FROM checkpoint_writes \
         WHERE thread_id = $1",
    )
    .bind(thread)
    .fetch_all(pool)
    .await
    .expect("read writes");
    let mut writes: Vec<Value> = writes
        .iter()
        .map(|r| {
            let (channel, kind) = (r.get::<String, _>(3), r.get::<Option<String>, _>(4));
            json!({
                "checkpoint": position(&r.get::<String, _>(0)),
                "ns": mask_text(&r.get::<String, _>(6)),
                "task_path": r.get::<String, _>(1),
                "idx": r.get::<i32, _>(2),
                "channel": channel,
                "type": kind,
                "blob": blob_of(&channel, kind.as_deref().unwrap_or_default(), &r.get::<Vec<u8>, _>(5)),
            })
        })
        .collect();
    // A task's regular writes are numbered in an order Python takes from a set or a dict; they
    // are compared as a set per task, special writes by their fixed indexes.
    for w in &mut writes {
        if w["idx"].as_i64().is_some_and(|i| i >= 0) {
            w["idx"] = json!("output");
        }
    }
    writes.sort_by_key(|w| {
        let key = |k: &str| w[k].to_string();
        (key("ns"), key("checkpoint"), key("task_path"), key("idx"), key("channel"), key("blob"))
    });
    json!({"checkpoints": checkpoints, "blobs": blobs, "writes": writes})
}
