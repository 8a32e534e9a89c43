//! [`AssistantRecord`]: an assistant, a graph with a configuration of its own, versioned as
//! LangGraph's server versions it; and the id of each registered graph's system assistant.

use serde_json::{json, Map, Value};
use uuid::Uuid;

use crate::records::now;

/// The namespace LangGraph's server derives an assistant's id from its graph's id in.
const NAMESPACE_GRAPH: Uuid = Uuid::from_u128(0x6ba7b821_9dad_11d1_80b4_00c04fd430c8);

/// The fields of an assistant a search may `select`, as LangGraph names them.
pub(crate) const ASSISTANT_FIELDS: [&str; 10] = [
    "assistant_id",
    "graph_id",
    "name",
    "description",
    "config",
    "context",
    "created_at",
    "updated_at",
    "metadata",
    "version",
];

/// One version of an assistant. The assistant as `GET /assistants/{id}` shows it is its latest
/// version with the assistant's `created_at` and `updated_at`; a version as
/// `/assistants/{id}/versions` lists it carries its own `created_at`.
#[derive(Debug, Clone, PartialEq)]
pub struct AssistantRecord {
    /// The assistant's id: derived from its graph's for a system assistant.
    pub assistant_id: String,
    /// The graph it runs.
    pub graph_id: String,
    /// The run configuration (`configurable`, `recursion_limit`, `tags`) a run on it starts from.
    pub config: Map<String, Value>,
    /// The static context a run on it starts from; LangGraph keeps it the mirror of
    /// `config.configurable`.
    pub context: Map<String, Value>,
    /// Its metadata, which searches and grants match.
    pub metadata: Map<String, Value>,
    /// Its name.
    pub name: String,
    /// Its description, if given.
    pub description: Option<String>,
    /// 1 for the first version, one more for each update.
    pub version: i64,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When its latest version was made (RFC 3339).
    pub updated_at: String,
}

impl AssistantRecord {
    /// The system assistant of `graph_id`, as LangGraph's server registers it when it starts: the
    /// graph's name, no configuration, `created_by: system`.
    pub fn system(graph_id: &str) -> Self {
        let at = now();
        Self {
            assistant_id: assistant_id(graph_id),
            graph_id: graph_id.to_owned(),
            config: Map::new(),
            context: Map::new(),
            metadata: Map::from_iter([("created_by".to_owned(), Value::from("system"))]),
            name: graph_id.to_owned(),
            description: None,
            version: 1,
            created_at: at.clone(),
            updated_at: at,
        }
    }

    /// Whether this is a registered graph's own assistant, which LangGraph lets every caller run
    /// whatever its read grant says.
    pub(crate) fn is_system(&self) -> bool {
        self.metadata.get("created_by").and_then(Value::as_str) == Some("system")
    }

    /// The assistant as the API shows it.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "assistant_id": self.assistant_id,
            "graph_id": self.graph_id,
            "config": self.config,
            "context": self.context,
            "metadata": self.metadata,
            "name": self.name,
            "description": self.description,
            "version": self.version,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        })
    }

    /// The version as `/assistants/{id}/versions` lists it: no `updated_at`, since a version
    /// never changes.
    pub(crate) fn version_json(&self) -> Value {
        json!({
            "assistant_id": self.assistant_id,
            "graph_id": self.graph_id,
            "config": self.config,
            "context": self.context,
            "metadata": self.metadata,
            "name": self.name,
            "description": self.description,
            "version": self.version,
            "created_at": self.created_at,
        })
    }
}

/// Only the `fields` of an assistant's JSON (all of them when `None`).
pub(crate) fn select(assistant: Value, fields: Option<&[String]>) -> Value {
    match (assistant, fields) {
        (Value::Object(map), Some(fields)) => {
            Value::Object(map.into_iter().filter(|(k, _)| fields.contains(k)).collect())
        }
        (assistant, _) => assistant,
    }
}

/// The id of the system assistant of `graph_id`: UUIDv5 of the graph id, as LangGraph derives it.
pub fn assistant_id(graph_id: &str) -> String {
    Uuid::new_v5(&NAMESPACE_GRAPH, graph_id.as_bytes()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assistant_ids_are_the_ones_langgraph_derives() {
        // The id `langgraph dev` gives the system assistant of a graph registered as "chain".
        assert_eq!(assistant_id("chain"), "608f7b9c-04e5-5cf2-a3f7-ba75a3719808");
    }

    #[test]
    fn a_system_assistant_is_version_one_of_its_graph_created_by_the_system() {
        let a = AssistantRecord::system("chain");
        assert!(a.is_system());
        let shown = a.to_json();
        assert_eq!(shown["assistant_id"], "608f7b9c-04e5-5cf2-a3f7-ba75a3719808");
        assert_eq!((shown["name"].as_str(), shown["version"].as_i64()), (Some("chain"), Some(1)));
        assert_eq!(shown["metadata"], json!({"created_by": "system"}));
        assert!(a.version_json().get("updated_at").is_none());
    }

    #[test]
    fn select_keeps_only_the_fields_asked_for() {
        let a = AssistantRecord::system("chain").to_json();
        let fields = ["assistant_id".to_owned(), "name".to_owned()];
        let picked = select(a, Some(&fields));
        assert_eq!(picked, json!({"assistant_id": "608f7b9c-04e5-5cf2-a3f7-ba75a3719808", "name": "chain"}));
    }
}
