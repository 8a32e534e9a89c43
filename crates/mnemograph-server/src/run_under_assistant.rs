//! A run request with its assistant's configuration merged under it, as LangGraph's server
//! merges them when it creates the run: the run's keys win, `configurable` and `context` are
//! merged key by key.

use serde_json::{Map, Value};

use crate::assistant::AssistantRecord;
use crate::assistant_change::BOTH_CONFIGURABLE_AND_CONTEXT;
use crate::error::{Result, ServerError};
use crate::request::{ConfigBody, RunCreate};

impl RunCreate {
    /// This request run on `assistant`: its `config.configurable` is the assistant's configurable
    /// values and context with the run's over them, key by key, and its `context` the same; its
    /// `recursion_limit` is the run's, else the assistant's. The run's nodes read the merged
    /// values through `Runtime::configurable`.
    ///
    /// As LangGraph keeps them, a run's `context` and `config.configurable` are each other's
    /// mirror, so a run may give one of them; both, non-empty, are a bad request (400).
    pub(crate) fn under(&self, assistant: &AssistantRecord) -> Result<RunCreate> {
        let config = self.config.clone().unwrap_or_default();
        let configurable = config.configurable.clone().unwrap_or_default();
        let context = self.context.clone().unwrap_or_default();
        if !configurable.is_empty() && !context.is_empty() {
            return Err(ServerError::BadRequest(BOTH_CONFIGURABLE_AND_CONTEXT.into()));
        }
        let asked = if context.is_empty() { configurable } else { context };
        let mut merged = assistant.context.clone();
        merged.extend(object(assistant.config.get("configurable")));
        merged.extend(asked);
        let recursion_limit = config.recursion_limit.or_else(|| {
            let limit = assistant.config.get("recursion_limit")?.as_u64()?;
            usize::try_from(limit).ok()
        });
        let mut run = self.clone();
        run.config = Some(ConfigBody { configurable: Some(merged.clone()), recursion_limit });
        run.context = Some(merged);
        Ok(run)
    }
}

fn object(value: Option<&Value>) -> Map<String, Value> {
    value.and_then(Value::as_object).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(body: Value) -> RunCreate {
        serde_json::from_value(body).expect("a run request")
    }

    fn assistant(config: Value, context: Value) -> AssistantRecord {
        let mut a = AssistantRecord::system("chain");
        if let (Value::Object(config), Value::Object(context)) = (config, context) {
            (a.config, a.context) = (config, context);
        }
        a
    }

    #[test]
    fn the_runs_configurable_wins_key_by_key_over_the_assistants() {
        let a = assistant(
            json!({"configurable": {"model": "big", "tone": "dry"}, "recursion_limit": 7}),
            json!({}),
        );
        let merged =
            run(json!({"assistant_id": "a", "config": {"configurable": {"model": "small"}}})).under(&a);
        let merged = merged.expect("merged");
        let config = merged.config.expect("a config");
        assert_eq!(
            Value::Object(config.configurable.unwrap_or_default()),
            json!({"model": "small", "tone": "dry"})
        );
        assert_eq!(config.recursion_limit, Some(7));
    }

    #[test]
    fn a_runs_context_merges_over_the_assistants_context() {
        let a = assistant(json!({"configurable": {"a": 1, "b": 1}}), json!({"a": 1, "b": 1}));
        let merged = run(json!({"assistant_id": "a", "context": {"b": 2}})).under(&a).expect("merged");
        assert_eq!(Value::Object(merged.context.unwrap_or_default()), json!({"a": 1, "b": 2}));
        let configurable = merged.config.and_then(|c| c.configurable).unwrap_or_default();
        assert_eq!(Value::Object(configurable), json!({"a": 1, "b": 2}));
    }

    #[test]
    fn a_run_with_both_configurable_and_context_is_a_bad_request() {
        let body =
            run(json!({"assistant_id": "a", "context": {"x": 1}, "config": {"configurable": {"y": 2}}}));
        let status = body.under(&assistant(json!({}), json!({}))).err().map(|e| e.status().as_u16());
        assert_eq!(status, Some(400));
    }
}
