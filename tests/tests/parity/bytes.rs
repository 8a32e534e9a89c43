//! Byte parity: the same graph with the same operations, run once by mnemograph-core alone and once
//! by Python LangGraph alone, leaves the same rows — blobs and write blobs equal byte for byte,
//! checkpoint and metadata documents equal as JSON — once what is random or time-based is masked:
//! ids (checkpoint, task and interrupt ids are uuid6- or hash-based), timestamps, and the random
//! suffix of channel versions.
//!
//! Differences that remain are listed in [`DOCUMENTED`], each explained in
//! `docs/getting-started.md`.

use serde_json::{json, Value};

use crate::handoff::same_rows_on;
use crate::mysql::setup;

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

/// A `checkpoints` row as compared: `checkpoint_id`, `parent_checkpoint_id`, `checkpoint_ns`,
/// and the `checkpoint` and `metadata` documents as JSON text.
pub(crate) type CheckpointRow = (String, Option<String>, String, String, String);

/// A `checkpoint_blobs` row: `channel`, `version`, `type`, `blob`, `checkpoint_ns`.
pub(crate) type BlobRow = (String, String, String, Option<Vec<u8>>, String);

/// A `checkpoint_writes` row: `checkpoint_id`, `task_path`, `idx`, `channel`, `type`, `blob`,
/// `checkpoint_ns`.
pub(crate) type WriteRow = (String, String, i32, String, Option<String>, Vec<u8>, String);

/// The rows a thread of `case` left in LangGraph's three tables (`checkpoints` ordered by
/// namespace and id, blobs by namespace, channel and version), in a form two runs can be
/// compared in.
pub(crate) fn comparable(
    case: &str,
    checkpoints: &[CheckpointRow],
    blobs: &[BlobRow],
    writes: &[WriteRow],
) -> Value {
    let documented = |channel: &str| DOCUMENTED.contains(&(case, channel)) || is_set(channel);
    let blob_of = |channel: &str, kind: &str, bytes: &[u8]| match documented(channel) {
        true => meaning(channel, kind, bytes),
        false => json!(hex(&mask(bytes))),
    };
    let ids: Vec<&str> = checkpoints.iter().map(|r| r.0.as_str()).collect();
    let position = |id: &str| ids.iter().position(|i| *i == id).map_or(json!(null), |p| json!(p));
    let checkpoints: Vec<Value> = checkpoints
        .iter()
        .map(|(_, parent, ns, checkpoint, metadata)| {
            json!({
                "parent": parent.as_deref().map(position),
                "ns": mask_text(ns),
                "checkpoint": checkpoint_doc(checkpoint),
                "metadata": serde_json::from_str::<Value>(&mask_text(metadata)).expect("metadata"),
            })
        })
        .collect();
    let blobs: Vec<Value> = blobs
        .iter()
        .map(|(channel, version, kind, blob, ns)| {
            json!({
                "ns": mask_text(ns),
                "channel": channel,
                "version": version_prefix(&json!(version)),
                "type": kind,
                "blob": blob.as_deref().map(|b| blob_of(channel, kind, b)),
            })
        })
        .collect();
    let mut writes: Vec<Value> = writes
        .iter()
        .map(|(checkpoint_id, task_path, idx, channel, kind, blob, ns)| {
            json!({
                "checkpoint": position(checkpoint_id),
                "ns": mask_text(ns),
                "task_path": task_path,
                "idx": idx,
                "channel": channel,
                "type": kind,
                "blob": blob_of(channel, kind.as_deref().unwrap_or_default(), blob),
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

/// The statements reading a thread's rows of the three tables, the thread id their one
/// parameter: `checkpoints` as [`CheckpointRow`]s ordered by namespace and id, `checkpoint_blobs`
/// as [`BlobRow`]s ordered by namespace, channel and version, `checkpoint_writes` as
/// [`WriteRow`]s.
pub(crate) struct RowQueries {
    pub(crate) checkpoints: &'static str,
    pub(crate) blobs: &'static str,
    pub(crate) writes: &'static str,
}

/// Everything `thread` left in the three tables of `pool`, in a form two runs can be compared in.
pub(crate) async fn read_rows<DB>(pool: &sqlx::Pool<DB>, sql: &RowQueries, thread: &str, case: &str) -> Value
where
    DB: sqlx::Database,
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
    for<'q> DB::Arguments<'q>: sqlx::IntoArguments<'q, DB>,
    for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'r> CheckpointRow: sqlx::FromRow<'r, DB::Row>,
    for<'r> BlobRow: sqlx::FromRow<'r, DB::Row>,
    for<'r> WriteRow: sqlx::FromRow<'r, DB::Row>,
{
    let checkpoints: Vec<CheckpointRow> =
        sqlx::query_as(sql.checkpoints).bind(thread).fetch_all(pool).await.expect("read checkpoints");
    let blobs: Vec<BlobRow> =
        sqlx::query_as(sql.blobs).bind(thread).fetch_all(pool).await.expect("read blobs");
    let writes: Vec<WriteRow> =
        sqlx::query_as(sql.writes).bind(thread).fetch_all(pool).await.expect("read writes");
    comparable(case, &checkpoints, &blobs, &writes)
}

/// MySQL's [`RowQueries`].
const MYSQL: RowQueries = RowQueries {
    checkpoints: "SELECT checkpoint_id, parent_checkpoint_id, checkpoint_ns, CAST(checkpoint AS CHAR), \
                  CAST(metadata AS CHAR) FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_ns, checkpoint_id",
    blobs: "SELECT channel, version, type, `blob`, checkpoint_ns FROM checkpoint_blobs WHERE thread_id = ? \
            ORDER BY checkpoint_ns, channel, version",
    writes: "SELECT checkpoint_id, task_path, idx, channel, type, `blob`, checkpoint_ns FROM checkpoint_writes \
             WHERE thread_id = ?",
};

/// Runs `ops` on `case` once in each language on MySQL and compares the rows.
pub(crate) async fn same_rows(case: &str, ops: &[Value]) {
    let Some((saver, peer)) = setup().await else { return };
    let pool = saver.pool().clone();
    let graph = crate::cases::graph(case, saver);
    same_rows_on(&peer, &graph, case, ops, async |thread: &str| read_rows(&pool, &MYSQL, thread, case).await)
        .await;
}
