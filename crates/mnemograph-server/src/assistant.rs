//! Assistants: one per registered graph, with the id LangGraph's server gives it.

use std::sync::Arc;

use serde_json::{json, Value};
use uuid::Uuid;

use crate::served::ServedGraph;

/// The namespace LangGraph's server derives an assistant's id from its graph's id in.
const NAMESPACE_GRAPH: Uuid = Uuid::from_u128(0x6ba7b821_9dad_11d1_80b4_00c04fd430c8);

/// A registered graph and its system assistant.
#[derive(Clone)]
pub(crate) struct Assistant {
    pub(crate) assistant_id: String,
    pub(crate) graph_id: String,
    pub(crate) created_at: String,
    pub(crate) graph: Arc<dyn ServedGraph>,
}

impl Assistant {
    pub(crate) fn new(graph_id: String, graph: Arc<dyn ServedGraph>) -> Self {
        Self { assistant_id: assistant_id(&graph_id), graph_id, created_at: crate::records::now(), graph }
    }

    /// A system assistant's metadata, as LangGraph's server gives it.
    pub(crate) fn metadata(&self) -> serde_json::Map<String, Value> {
        serde_json::Map::from_iter([("created_by".to_owned(), Value::from("system"))])
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({
            "assistant_id": self.assistant_id,
            "graph_id": self.graph_id,
            "config": {},
            "context": {},
            "metadata": self.metadata(),
            "name": self.graph_id,
            "created_at": self.created_at,
            "updated_at": self.created_at,
            "version": 1,
            "description": null,
        })
    }

    /// `GET /assistants/{id}/schemas`: the state's fields. Rust states carry no JSON Schema of
    /// their field types, so each property is open (`{}`).
    pub(crate) fn schemas(&self) -> Value {
        let properties: serde_json::Map<String, Value> =
            self.graph.fields().into_iter().map(|f| (f.to_owned(), json!({}))).collect();
        let schema = json!({ "title": self.graph_id, "type": "object", "properties": properties });
        json!({
            "graph_id": self.graph_id,
            "input_schema": schema,
            "output_schema": schema,
            "state_schema": schema,
            "config_schema": null,
            "context_schema": null,
        })
    }
}

/// The id of the system assistant of `graph_id`: UUIDv5 of the graph id, as LangGraph derives it.
pub(crate) fn assistant_id(graph_id: &str) -> String {
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
}
