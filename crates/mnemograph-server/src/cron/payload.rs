//! A cron's `payload`: the run request it was made from, stored as LangGraph's server stores it
//! (the request's fields, its assistant resolved to a UUID, `config.configurable.cron_id` set),
//! and the run request each tick makes from it.

use serde_json::{Map, Value};

use super::record::CronRecord;
use crate::assistant_change::BOTH_CONFIGURABLE_AND_CONTEXT;
use crate::error::{Result, ServerError};
use crate::request::RunCreate;

/// The key of a cron's id in its runs' configurable values, as LangGraph names it.
const CRON_ID_KEY: &str = "cron_id";

/// The payload of a new cron made from request `body`: the body, its assistant `assistant_id`,
/// and the cron's id in `config.configurable`.
pub(crate) fn stored(mut body: Map<String, Value>, assistant_id: &str, cron_id: &str) -> Map<String, Value> {
    body.insert("assistant_id".into(), assistant_id.into());
    with_cron_id(&mut body, cron_id);
    body
}

/// `existing` with the fields of `patch` over it, one by one, as LangGraph merges an update into
/// a cron's payload: the assistant and the cron's id stay. A result that gives both
/// `config.configurable` values and a `context` is a bad request (400), as it would be for the
/// run it makes.
pub(crate) fn merged(
    existing: &Map<String, Value>,
    patch: &Map<String, Value>,
    cron_id: &str,
) -> Result<Map<String, Value>> {
    let mut payload = existing.clone();
    payload.extend(patch.clone());
    if let Some(assistant) = existing.get("assistant_id") {
        payload.insert("assistant_id".into(), assistant.clone());
    }
    with_cron_id(&mut payload, cron_id);
    let configurable = payload
        .get("config")
        .and_then(|c| c.get("configurable"))
        .and_then(Value::as_object)
        .is_some_and(|c| c.keys().any(|k| k != CRON_ID_KEY));
    let context = payload.get("context").and_then(Value::as_object).is_some_and(|c| !c.is_empty());
    if configurable && context {
        return Err(ServerError::BadRequest(BOTH_CONFIGURABLE_AND_CONTEXT.into()));
    }
    Ok(payload)
}

/// The run request a tick of `cron` makes, as LangGraph's scheduler makes it: the payload, its
/// metadata under the cron's (`{**cron.metadata, **payload.metadata}`), and for a stateless cron
/// that keeps its threads, `on_completion: keep`. A payload with a `context` carries the cron's
/// id there, which the run mirrors into its configurable values.
pub(crate) fn run_request(cron: &CronRecord) -> Result<RunCreate> {
    let mut payload = cron.payload.clone();
    let mut metadata = cron.metadata.clone();
    if let Some(Value::Object(own)) = payload.get("metadata") {
        metadata.extend(own.clone());
    }
    payload.insert("metadata".into(), Value::Object(metadata));
    if cron.thread_id.is_none() && cron.on_run_completed.as_deref() == Some("keep") {
        payload.entry("on_completion").or_insert_with(|| "keep".into());
    }
    let context_given = payload.get("context").and_then(Value::as_object).is_some_and(|c| !c.is_empty());
    if context_given {
        let configurable =
            payload.get_mut("config").and_then(|c| c.get_mut("configurable")).and_then(Value::as_object_mut);
        let id = configurable.and_then(|c| c.remove(CRON_ID_KEY));
        if let (Some(id), Some(Value::Object(context))) = (id, payload.get_mut("context")) {
            context.entry(CRON_ID_KEY).or_insert(id);
        }
    }
    serde_json::from_value(Value::Object(payload)).map_err(|e| {
        ServerError::Unprocessable(format!("cron {} has an unreadable payload: {e}", cron.cron_id))
    })
}

/// Sets `config.configurable.cron_id`, making the objects on the way when missing.
fn with_cron_id(payload: &mut Map<String, Value>, cron_id: &str) {
    let config = payload.entry("config").or_insert_with(|| Value::Object(Map::new()));
    if !config.is_object() {
        *config = Value::Object(Map::new());
    }
    let Some(config) = config.as_object_mut() else { return };
    let configurable = config.entry("configurable").or_insert_with(|| Value::Object(Map::new()));
    if !configurable.is_object() {
        *configurable = Value::Object(Map::new());
    }
    if let Some(configurable) = configurable.as_object_mut() {
        configurable.insert(CRON_ID_KEY.into(), cron_id.into());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_cron_payload_holds_the_request_and_its_cron_id() {
        let body = object(json!({"assistant_id": "chain", "schedule": "* * * * *", "input": {"log": []}}));
        let payload = stored(body, "a-uuid", "c-uuid");
        assert_eq!(
            Value::Object(payload),
            json!({"assistant_id": "a-uuid", "schedule": "* * * * *", "input": {"log": []},
                   "config": {"configurable": {"cron_id": "c-uuid"}}})
        );
    }

    #[test]
    fn an_update_merges_over_the_payload_and_keeps_its_assistant_and_id() {
        let existing = stored(object(json!({"input": {"log": ["x"]}, "webhook": "w"})), "a", "c");
        let patch = object(json!({"input": {"log": ["y"]}, "assistant_id": "other", "config": {}}));
        let payload = merged(&existing, &patch, "c").expect("merged");
        assert_eq!(payload["input"], json!({"log": ["y"]}));
        assert_eq!((payload["assistant_id"].clone(), payload["webhook"].clone()), (json!("a"), json!("w")));
        assert_eq!(payload["config"], json!({"configurable": {"cron_id": "c"}}));
        let both = object(json!({"config": {"configurable": {"k": 1}}, "context": {"k": 2}}));
        assert_eq!(merged(&existing, &both, "c").err().map(|e| e.status().as_u16()), Some(400));
    }
}
