//! [`StateGraph::compile`]: validating a graph and lowering it into the plan the engine runs.

use std::sync::Arc;

use super::builder::StateGraph;
use super::compiled::{Built, CompiledGraph};
use super::draw::Drawing;
use super::lower::lower;
use super::validate;
use crate::checkpoint::Checkpointer;
use crate::error::Result;
use crate::pregel::Pregel;
use crate::State;

impl<S: State, C: Send + Sync + 'static> StateGraph<S, C> {
    /// Validates the graph and compiles it.
    ///
    /// Names that do not exist, edges from END or to START, a missing entry point and the like
    /// are errors. A node no run can reach ([`GraphIssue::UnreachableNode`]) and a loop no run can
    /// leave ([`GraphIssue::EndlessLoop`]) are warnings, as LangGraph compiles such graphs: each
    /// is logged with `tracing::warn!` and listed by [`CompiledGraph::warnings`]. The checks
    /// behind them never flag a graph that can run correctly: a conditional edge without a path
    /// map, a routing function that may return pushes, and a node that may return a [`Command`]
    /// all count as reaching every node.
    ///
    /// [`GraphIssue::UnreachableNode`]: crate::GraphIssue::UnreachableNode
    /// [`GraphIssue::EndlessLoop`]: crate::GraphIssue::EndlessLoop
    /// [`Command`]: crate::Command
    ///
    /// # Errors
    /// [`Error::InvalidGraph`](crate::Error::InvalidGraph) listing every error found.
    pub fn compile(self) -> Result<CompiledGraph<S, C>> {
        let warnings = validate::validate(&self)?;
        for warning in &warnings {
            tracing::warn!("{warning}");
        }
        let drawing = Drawing::of(&self);
        let built = Arc::new(Built { drawing, warnings });
        Ok(CompiledGraph { pregel: Pregel::new(lower(self)), built })
    }

    /// Compiles the graph with a checkpointer.
    ///
    /// # Errors
    /// As [`compile`](Self::compile).
    pub fn compile_with(self, checkpointer: impl Checkpointer) -> Result<CompiledGraph<S, C>> {
        Ok(self.compile()?.with_checkpointer(checkpointer))
    }
}
