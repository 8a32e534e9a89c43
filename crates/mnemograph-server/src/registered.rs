//! [`RegisteredGraph`]: a graph the server serves under its graph id, which its assistants run.

use std::sync::Arc;

use serde_json::Value;

use crate::schemas::GraphSchemas;
use crate::served::ServedGraph;

/// A graph registered with [`Server::graph`](crate::Server::graph).
#[derive(Clone)]
pub struct RegisteredGraph {
    /// The id it is served as.
    pub graph_id: String,
    /// The graph, on the server's saver and store.
    pub graph: Arc<dyn ServedGraph>,
    schemas: GraphSchemas,
}

impl std::fmt::Debug for RegisteredGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredGraph").field("graph_id", &self.graph_id).finish_non_exhaustive()
    }
}

impl RegisteredGraph {
    /// `graph` served as `graph_id`, with `schemas`, else its state's fields as open properties.
    pub(crate) fn new(graph_id: String, graph: Arc<dyn ServedGraph>, schemas: Option<GraphSchemas>) -> Self {
        let schemas = schemas.unwrap_or_else(|| GraphSchemas::open(&graph_id, &graph.fields()));
        Self { graph_id, graph, schemas }
    }

    /// `GET /assistants/{id}/schemas`: its schemas and its graph id.
    pub(crate) fn schemas(&self) -> Value {
        let mut schemas = self.subgraph_schemas();
        schemas["graph_id"] = Value::String(self.graph_id.clone());
        schemas
    }

    /// The schemas of one of its subgraphs, which share its state and context:
    /// [`schemas`](Self::schemas) without the graph id.
    pub(crate) fn subgraph_schemas(&self) -> Value {
        self.schemas.to_json()
    }
}
