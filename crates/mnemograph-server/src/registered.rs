//! [`RegisteredGraph`]: a graph the server serves under its graph id, which its assistants run.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::served::ServedGraph;

/// A graph registered with [`Server::graph`](crate::Server::graph).
#[derive(Clone)]
pub(crate) struct RegisteredGraph {
    pub(crate) graph_id: String,
    pub(crate) graph: Arc<dyn ServedGraph>,
}

impl RegisteredGraph {
    pub(crate) fn new(graph_id: String, graph: Arc<dyn ServedGraph>) -> Self {
        Self { graph_id, graph }
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
