//! Byte parity on SQLite: the same graph with the same operations, run once by mnemograph-core
//! alone and once by Python LangGraph alone, leaves the same rows in `checkpoints` and `writes`:
//! the storage class of every column, each channel value inside the checkpoint document and each
//! write's value equal byte for byte, the rest of the document and the metadata equal as data,
//! once what is random or time-based is masked (as `bytes.rs` masks it for MySQL).

use mnemograph_core::checkpoint::serde::{checkpoint_from_msgpack, dumps_typed, loads_typed};
use serde_json::{json, Map, Value};
use sqlx::{Row, SqlitePool};

use crate::bytes::{checkpoint_doc, hex, is_set, mask, mask_text, meaning, DOCUMENTED};
use crate::handoff::same_rows_on;
use crate::sqlite::setup;

/// A channel value or write as compared: its bytes with ids masked, or, for the rows `bytes.rs`
/// documents as different by design, what both sides agree they mean.
fn value(case: &str, channel: &str, kind: &str, bytes: &[u8]) -> Value {
    if DOCUMENTED.contains(&(case, channel)) || is_set(channel) {
        meaning(channel, kind, bytes)
    } else {
        json!(hex(&mask(bytes)))
    }
}

/// Everything a thread left in the two tables, in a form two runs can be compared in.
async fn rows(pool: &SqlitePool, thread: &str, case: &str) -> Value {
    let checkpoints = sqlx::query(
        "SELECT checkpoint_id, parent_checkpoint_id, checkpoint_ns, type, checkpoint, metadata, \
         typeof(checkpoint), typeof(metadata) FROM checkpoints WHERE thread_id = ? \
         ORDER BY checkpoint_ns, checkpoint_id",
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
            let blob: Vec<u8> = r.get(4);
            let mut doc =
                loads_typed("msgpack", &blob).expect("a msgpack document").to_json().expect("as JSON");
            doc.as_object_mut().expect("a map").remove("channel_values");
            let values: Map<String, Value> = checkpoint_from_msgpack(&blob)
                .expect("a checkpoint")
                .channel_values
                .iter()
                .map(|(channel, v)| {
                    let (kind, bytes) = dumps_typed(v).expect("a stored value encodes");
                    (channel.to_string(), value(case, channel, &kind, &bytes))
                })
                .collect();
            json!({
                "parent": r.get::<Option<String>, _>(1).as_deref().map(position),
                "ns": mask_text(&r.get::<String, _>(2)),
                "types": [r.get::<Option<String>, _>(3), r.get::<String, _>(6), r.get::<String, _>(7)],
                "checkpoint": checkpoint_doc(&doc.to_string()),
                "values": values,
                "metadata": serde_json::from_str::<Value>(&mask_text(
                    std::str::from_utf8(&r.get::<Vec<u8>, _>(5)).expect("UTF-8 metadata")
                ))
                .expect("metadata"),
            })
        })
        .collect();
    let writes = sqlx::query(
        "SELECT checkpoint_id, task_path, idx, channel, type, value, checkpoint_ns, typeof(value) \
         FROM writes WHERE thread_id = ?",
    )
    .bind(thread)
    .fetch_all(pool)
    .await
    .expect("read writes");
    let mut writes: Vec<Value> = writes
        .iter()
        .map(|r| {
            let (channel, kind) = (r.get::<String, _>(3), r.get::<Option<String>, _>(4).unwrap_or_default());
            let idx = r.get::<i64, _>(2);
            json!({
                "checkpoint": position(&r.get::<String, _>(0)),
                "ns": mask_text(&r.get::<String, _>(6)),
                "task_path": r.get::<String, _>(1),
                // A task's other writes are numbered in an order Python takes from a set or a
                // dict (see `bytes.rs`): compared as a set per task.
                "idx": if idx >= 0 { json!("output") } else { json!(idx) },
                "channel": channel,
                "type": kind,
                "storage": r.get::<String, _>(7),
                "value": value(case, &channel, &kind, &r.get::<Vec<u8>, _>(5)),
            })
        })
        .collect();
    writes.sort_by_key(|w| {
        let key = |k: &str| w[k].to_string();
        (key("ns"), key("checkpoint"), key("task_path"), key("idx"), key("channel"), key("value"))
    });
    json!({"checkpoints": checkpoints, "writes": writes})
}

/// Runs `ops` on `case` once in each language on SQLite and compares the rows.
pub(crate) async fn same_rows(case: &str, ops: &[Value]) {
    let Some((saver, peer)) = setup().await else { return };
    let pool = saver.pool().clone();
    let graph = crate::cases::graph(case, saver);
    same_rows_on(&peer, &graph, case, ops, async |thread: &str| rows(&pool, thread, case).await).await;
}
