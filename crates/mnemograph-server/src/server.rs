//! [`Server`]: registers compiled graphs on one saver and serves them.

use std::sync::Arc;

use axum::Router;
use mnemograph_core::checkpoint::{Checkpointer, DynCheckpointer};
use mnemograph_core::{CompiledGraph, State};
use tokio::net::TcpListener;

use crate::app::App;
use crate::assistant::Assistant;
use crate::error::{Result, ServerError};
use crate::served::{Served, ServedGraph};

/// A LangGraph API server over compiled graphs.
///
/// Every graph gets the server's saver (threads live there) and a system assistant whose id is
/// derived from the graph's id exactly as LangGraph's server derives it, so clients may name a
/// graph by either. Threads and runs are kept in the process; their checkpoints are in the saver.
pub struct Server {
    saver: Arc<dyn DynCheckpointer>,
    assistants: Vec<Assistant>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let graphs: Vec<&str> = self.assistants.iter().map(|a| a.graph_id.as_str()).collect();
        f.debug_struct("Server").field("graphs", &graphs).finish_non_exhaustive()
    }
}

impl Server {
    /// A server whose threads are checkpointed in `saver`.
    pub fn new(saver: impl Checkpointer) -> Self {
        Self::with_shared_saver(Arc::new(saver))
    }

    /// A server on a saver shared with other code.
    pub fn with_shared_saver(saver: Arc<dyn DynCheckpointer>) -> Self {
        Self { saver, assistants: Vec::new() }
    }

    /// Serves `graph` as `graph_id`, on the server's saver.
    ///
    /// # Errors
    /// [`ServerError::Conflict`] when `graph_id` is already taken.
    pub fn graph<S: State, C: Send + Sync + 'static>(
        mut self,
        graph_id: impl Into<String>,
        graph: CompiledGraph<S, C>,
    ) -> Result<Self> {
        let graph_id = graph_id.into();
        if self.assistants.iter().any(|a| a.graph_id == graph_id) {
            return Err(ServerError::Conflict(format!("a graph is already served as `{graph_id}`")));
        }
        let graph = graph.with_shared_checkpointer(self.saver.clone());
        let served: Arc<dyn ServedGraph> = Arc::new(Served(Arc::new(graph)));
        self.assistants.push(Assistant::new(graph_id, served));
        Ok(self)
    }

    /// The API as an axum [`Router`], to mount or to serve with your own listener.
    pub fn router(self) -> Router {
        crate::routes::router(Arc::new(App::new(self.assistants, self.saver)))
    }

    /// Serves the API on `listener` until the process ends.
    ///
    /// # Errors
    /// [`ServerError::Io`] when the listener fails.
    pub async fn serve(self, listener: TcpListener) -> Result<()> {
        axum::serve(listener, self.router()).await.map_err(ServerError::Io)
    }
}
