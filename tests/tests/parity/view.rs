//! What `tests/python/parity.py` prints of a thread, computed on the Rust side: the state and the
//! history, each snapshot reduced to the fields both implementations define.

use mnemograph_core::checkpoint::CheckpointMetadata;
use mnemograph_core::checkpoint::ListOptions;
use mnemograph_core::prelude::*;
use mnemograph_core::{Interrupt, StateSnapshot};
use serde_json::{json, Value};

use crate::cases::S;

/// State values without empty fields (Python shows only the fields that were written).
fn clean(values: &S) -> Value {
    let Value::Object(map) = serde_json::to_value(values).expect("the state serializes") else {
        unreachable!("a struct serializes to an object")
    };
    let kept = map.into_iter().filter(|(_, v)| !v.is_null() && *v != json!([])).collect();
    Value::Object(kept)
}

fn interrupts(items: &[Interrupt]) -> Value {
    let mut list: Vec<Value> = items.iter().map(|i| json!({"value": i.value, "id": i.id})).collect();
    list.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    Value::Array(list)
}

fn snapshot(s: &StateSnapshot<S>) -> Value {
    let mut next = s.next.clone();
    next.sort();
    let mut tasks: Vec<Value> = s
        .tasks
        .iter()
        .map(|t| {
            json!({
                "id": t.id,
                "name": t.name,
                "error": t.error.is_some(),
                "interrupts": interrupts(&t.interrupts),
            })
        })
        .collect();
    tasks.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    json!({
        "values": clean(&s.values),
        "next": next,
        "checkpoint_id": s.config.as_ref().and_then(|c| c.checkpoint_id.clone()),
        "parent_id": s.parent_config.as_ref().and_then(|c| c.checkpoint_id.clone()),
        "metadata": s.metadata.as_ref().map(CheckpointMetadata::to_json),
        "tasks": tasks,
        "interrupts": interrupts(&s.interrupts),
    })
}

/// The view of `thread` as mnemograph-core reads it.
pub(crate) async fn view(graph: &CompiledGraph<S>, thread: &str) -> Value {
    let config = RunConfig::thread(thread);
    let state = graph.get_state(&config).await.expect("get_state");
    let history = graph.get_state_history(&config, ListOptions::default()).await.expect("get_state_history");
    json!({
        "state": snapshot(&state),
        "history": history.iter().map(snapshot).collect::<Vec<_>>(),
    })
}
