//! Byte parity: the same graph with the same operations, run once by mnemograph-core alone and once
//! by Python LangGraph alone, leaves the same rows — blobs and write blobs equal byte for byte,
//! checkpoint and metadata documents equal as JSON — once what is random or time-based is masked:
//! ids (checkpoint, task and interrupt ids are uuid6- or hash-based), timestamps, and the random
//! suffix of channel versions.
//!
//! Differences that remain are listed in [`DOCUMENTED`], each explained in
//! `docs/getting-started.md`.

use serde_json::{json, Value};
use sqlx::Row;

use crate::{python, rust, setup, DATABASE};

/// `(case, channel)`: rows whose bytes differ between the two implementations by design, each
/// explained in `docs/getting-started.md`; they are compared by what they mean instead.
pub(crate) const DOCUMENTED: &[(&str, &str)] = &[
    // A `Push` carries a whole state, so its `Send` argument names every field of the state;
    // Python's names the keys the node passed. Compared as the Sends with empty fields left out.
    ("push_failure", "__pregel_tasks"),
    // The same for the push of a `Command(goto=...)` given as input.
    ("command", "__pregel_tasks"),
    // An error is stored as its message; Python stores the exception's `repr`. Compared as "an
    // error was recorded".
    ("push_failure", "__error__"),
];

/// A join barrier's value is a Python `set`, whose order follows the process's hash seed: compared
/// as its sorted members.
pub(crate) fn is_set(channel: &str) -> bool {
    channel.starts_with("join:")
}

/// A documented row's blob (see [`DOCUMENTED`]), or a set, as what both sides agree on.
pub(crate) fn meaning(channel: &str, kind: &str, blob: &[u8]) -> Value {
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

/// Replaces every id-shaped run of bytes (a 36-character uuid or 32 hex digits) with zeros of
/// the same length, so two values that differ only in ids compare equal.
pub(crate) fn mask(bytes: &[u8]) -> Vec<u8> {
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

pub(crate) fn mask_text(text: &str) -> String {
    String::from_utf8(mask(text.as_bytes())).expect("masking keeps UTF-8")
}

/// A channel version without its random suffix: `"000…0003.0.123"` → `"000…0003"`.
pub(crate) fn version_prefix(v: &Value) -> Value {
    match v.as_str() {
        Some(s) => json!(s.split('.').next().unwrap_or(s)),
        None => v.clone(),
    }
}

/// A checkpoint document with its id, timestamp and version suffixes masked.
pub(crate) fn checkpoint_doc(text: &str) -> Value {
    let mut doc: Value = serde_json::from_str(text).expect("a checkpoint document");
    let obj = doc.as_object_mut().expect("an object");
    obj.remove("id");
    obj.remove("ts");
    if let Some(Value::Object(versions)) = obj.get_mut("channel_versions") {
        for v in versions.values_mut() {
            *v = version_prefix(v);
        }
    }
    if let Some(Value::Object(seen)) = obj.get_mut("versions_seen") {
        for node in seen.values_mut() {
            if let Value::Object(versions) = node {
                for v in versions.values_mut() {
                    *v = version_prefix(v);
                }
            }
        }
    }
    serde_json::from_str(&mask_text(&doc.to_string())).expect("masked JSON")
}

/// Everything a thread left in the three tables, in a form two runs can be compared in.
async fn rows(pool: &sqlx::MySqlPool, thread: &str, case: &str) -> Value {
    let documented = |channel: &str| DOCUMENTED.contains(&(case, channel)) || is_set(channel);
    let checkpoints = sqlx::query(
        "SELECT checkpoint_id, parent_checkpoint_id, checkpoint_ns, CAST(checkpoint AS CHAR), \
         CAST(metadata AS CHAR) FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id",
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
        "SELECT channel, version, type, `blob`, checkpoint_ns FROM checkpoint_blobs WHERE thread_id = ? \
         ORDER BY checkpoint_ns, channel, version",
    )
    .bind(thread)
    .fetch_all(pool)
    .await
    .expect("read blobs");
    let blobs: Vec<Value> = blobs
        .iter()
        .map(|r| {
            json!({
                "ns": mask_text(&r.get::<String, _>(4)),
                "channel": r.get::<String, _>(0),
                "version": version_prefix(&json!(r.get::<String, _>(1))),
                "type": r.get::<String, _>(2),
                "blob": r.get::<Option<Vec<u8>>, _>(3).map(|b| match documented(&r.get::<String, _>(0)) {
                    true => meaning(&r.get::<String, _>(0), &r.get::<String, _>(2), &b),
                    false => json!(hex(&mask(&b))),
                }),
            })
        })
        .collect();
    let writes = sqlx::query(
        "SELECT checkpoint_id, task_path, idx, channel, type, `blob`, checkpoint_ns FROM checkpoint_writes \
         WHERE thread_id = ?",
    )
    .bind(thread)
    .fetch_all(pool)
    .await
    .expect("read writes");
    let mut writes: Vec<Value> = writes
        .iter()
        .map(|r| {
            json!({
                "checkpoint": position(&r.get::<String, _>(0)),
                "ns": mask_text(&r.get::<String, _>(6)),
                "task_path": r.get::<String, _>(1),
                "idx": r.get::<i32, _>(2),
                "channel": r.get::<String, _>(3),
                "type": r.get::<Option<String>, _>(4),
                "blob": match documented(&r.get::<String, _>(3)) {
                    true => meaning(&r.get::<String, _>(3), &r.get::<Option<String>, _>(4).unwrap_or_default(), &r.get::<Vec<u8>, _>(5)),
                    false => json!(hex(&mask(&r.get::<Vec<u8>, _>(5)))),
                },
            })
        })
        .collect();
    // A task's special writes have fixed indexes; its other writes are numbered in the order it
    // made them, which in Python follows a set's iteration order for edges (it varies with the
    // process's hash seed) and the returned dict's key order for updates. So those are compared
    // as a set per task.
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

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `ops` on `case` once in each language and compares the rows.
pub(crate) async fn same_rows(case: &str, ops: &[Value]) {
    let Some((saver, py)) = setup().await else { return };
    let pool = saver.pool().clone();
    let graph = crate::cases::graph(case, saver);
    let (rust_thread, python_thread) = (format!("bytes-{case}-rust"), format!("bytes-{case}-python"));
    for op in ops {
        rust(&graph, &rust_thread, op).await;
        python(&py, &python_thread, case, op);
    }
    let ours = rows(&pool, &rust_thread, case).await;
    let theirs = rows(&pool, &python_thread, case).await;
    for table in ["checkpoints", "blobs", "writes"] {
        let (a, b) = (&ours[table], &theirs[table]);
        assert!(
            a == b,
            "{case}: the {table} rows of mnemograph-core and Python LangGraph differ (database {DATABASE})\n\
             rust:   {}\npython: {}",
            serde_json::to_string_pretty(a).unwrap_or_default(),
            serde_json::to_string_pretty(b).unwrap_or_default(),
        );
    }
}
