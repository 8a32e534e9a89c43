//! [`AssistantChange`]: what a create or an update of an assistant asks for, checked as
//! LangGraph's server checks it, and the version it makes.

use serde_json::{Map, Value};

use crate::assistant::AssistantRecord;
use crate::auth::is_reserved;
use crate::error::{Result, ServerError};
use crate::records::now;

/// LangGraph's refusal of an assistant or run given both `config.configurable` and `context`.
pub(crate) const BOTH_CONFIGURABLE_AND_CONTEXT: &str = "Cannot specify both configurable and context. Prefer \
     setting context alone. Context was introduced in LangGraph 0.6.0 and is the long term planned replacement \
     for configurable.";

/// A create's or an update's fields, checked; `None` keeps what the assistant has.
#[derive(Debug, Clone, Default)]
pub struct AssistantChange {
    /// The graph it runs.
    pub graph_id: Option<String>,
    /// Its run configuration.
    pub config: Option<Map<String, Value>>,
    /// Its context.
    pub context: Option<Map<String, Value>>,
    /// Merged into the assistant's metadata.
    pub metadata: Map<String, Value>,
    /// Its name.
    pub name: Option<String>,
    /// Its description.
    pub description: Option<String>,
}

impl AssistantChange {
    /// The change a request asks for. `config` must be a run configuration (`tags` a list of
    /// strings, `recursion_limit` an integer, `configurable` an object; else 422), and may not
    /// come with `context` while its `configurable` is set (400). As LangGraph keeps them, either
    /// one given becomes the other's mirror. Keys only the server's authentication sets are
    /// dropped from both, so an assistant cannot name a caller.
    pub(crate) fn new(
        graph_id: Option<String>,
        config: Option<Map<String, Value>>,
        context: Option<Map<String, Value>>,
        metadata: Option<Map<String, Value>>,
        name: Option<String>,
        description: Option<String>,
    ) -> Result<Self> {
        let mut config = config.map(checked_config).transpose()?;
        let mut context = context.map(without_reserved);
        let configurable = config.as_ref().and_then(|c| c.get("configurable")?.as_object().cloned());
        match (configurable.filter(|c| !c.is_empty()), context.as_ref().filter(|c| !c.is_empty())) {
            (Some(_), Some(_)) => return Err(ServerError::BadRequest(BOTH_CONFIGURABLE_AND_CONTEXT.into())),
            (Some(configurable), None) => context = Some(configurable),
            (None, Some(given)) => {
                config
                    .get_or_insert_with(Map::new)
                    .insert("configurable".into(), Value::Object(given.clone()));
            }
            (None, None) => {}
        }
        Ok(Self { graph_id, config, context, metadata: metadata.unwrap_or_default(), name, description })
    }

    /// Version 1 of a new assistant `assistant_id` of `graph_id`, named `Untitled` unless named.
    pub(crate) fn create(self, assistant_id: String, graph_id: String) -> AssistantRecord {
        let at = now();
        AssistantRecord {
            assistant_id,
            graph_id,
            config: self.config.unwrap_or_default(),
            context: self.context.unwrap_or_default(),
            metadata: self.metadata,
            name: self.name.unwrap_or_else(|| "Untitled".to_owned()),
            description: self.description,
            version: 1,
            created_at: at.clone(),
            updated_at: at,
        }
    }

    /// Version `version` of `current`, changed as asked: an empty `config` keeps the current one,
    /// as LangGraph keeps it; `metadata` is merged into the current metadata. Its `created_at` is
    /// now, as a version's is; the assistant's own `created_at` stays with the assistant.
    pub fn apply(&self, current: &AssistantRecord, version: i64) -> AssistantRecord {
        let at = now();
        let mut metadata = current.metadata.clone();
        metadata.extend(self.metadata.clone());
        AssistantRecord {
            assistant_id: current.assistant_id.clone(),
            graph_id: self.graph_id.clone().unwrap_or_else(|| current.graph_id.clone()),
            config: self.config.clone().filter(|c| !c.is_empty()).unwrap_or_else(|| current.config.clone()),
            context: self.context.clone().unwrap_or_else(|| current.context.clone()),
            metadata,
            name: self.name.clone().unwrap_or_else(|| current.name.clone()),
            description: self.description.clone().or_else(|| current.description.clone()),
            version,
            created_at: at.clone(),
            updated_at: at,
        }
    }
}

/// `config` when it is a run configuration as LangGraph's `Config` schema describes one, its
/// `configurable` without the keys only authentication sets.
fn checked_config(mut config: Map<String, Value>) -> Result<Map<String, Value>> {
    let bad = |why: &str| Err(ServerError::Unprocessable(format!("invalid `config`: {why}")));
    match config.get("tags") {
        None | Some(Value::Null) => {}
        Some(Value::Array(tags)) if tags.iter().all(Value::is_string) => {}
        Some(_) => return bad("`tags` must be a list of strings"),
    }
    match config.get("recursion_limit") {
        None | Some(Value::Null) => {}
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {}
        Some(_) => return bad("`recursion_limit` must be an integer"),
    }
    match config.remove("configurable") {
        None => {}
        Some(Value::Object(c)) => {
            config.insert("configurable".into(), Value::Object(without_reserved(c)));
        }
        Some(_) => return bad("`configurable` must be an object"),
    }
    Ok(config)
}

fn without_reserved(map: Map<String, Value>) -> Map<String, Value> {
    map.into_iter().filter(|(k, _)| !is_reserved(k)).collect()
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

    fn change(config: Value, context: Value) -> Result<AssistantChange> {
        let config = Some(object(config));
        AssistantChange::new(None, config, Some(object(context)), None, None, None)
    }

    #[test]
    fn configurable_and_context_mirror_each_other() {
        let c = change(json!({"configurable": {"model": "m"}}), json!({})).unwrap();
        assert_eq!(c.context, Some(object(json!({"model": "m"}))));
        let c = change(json!({}), json!({"model": "m"})).unwrap();
        assert_eq!(c.config, Some(object(json!({"configurable": {"model": "m"}}))));
    }

    #[test]
    fn both_configurable_and_context_are_a_bad_request() {
        let e = change(json!({"configurable": {"a": 1}}), json!({"b": 2})).err().map(|e| e.status());
        assert_eq!(e, Some(axum::http::StatusCode::BAD_REQUEST));
    }

    #[test]
    fn a_config_outside_the_schema_is_unprocessable() {
        for bad in [json!({"tags": "x"}), json!({"recursion_limit": "ten"}), json!({"configurable": 3})] {
            let e = change(bad.clone(), json!({})).err().map(|e| e.status());
            assert_eq!(e, Some(axum::http::StatusCode::UNPROCESSABLE_ENTITY), "{bad}");
        }
    }

    #[test]
    fn an_update_merges_metadata_and_keeps_what_it_does_not_name() {
        let mut current = AssistantRecord::system("g");
        current.config = object(json!({"configurable": {"model": "m"}}));
        current.context = object(json!({"model": "m"}));
        let meta = Some(object(json!({"team": "x"})));
        let c = AssistantChange::new(None, None, None, meta, Some("renamed".into()), None).unwrap();
        let next = c.apply(&current, 2);
        assert_eq!((next.version, next.name.as_str()), (2, "renamed"));
        assert_eq!(next.config, current.config);
        assert_eq!(next.context, current.context);
        assert_eq!(Value::Object(next.metadata), json!({"created_by": "system", "team": "x"}));
    }

    #[test]
    fn keys_only_authentication_sets_are_dropped() {
        let c =
            change(json!({"configurable": {"langgraph_auth_user": {"identity": "x"}, "m": 1}}), json!({}))
                .unwrap();
        assert_eq!(c.context, Some(object(json!({"m": 1}))));
    }
}
