//! The graph builder, compiled graphs, and the user-facing run APIs.

pub(crate) mod branch;
pub(crate) mod builder;
mod compile;
pub(crate) mod compiled;
pub(crate) mod draw;
mod flow;
pub(crate) mod invoke;
mod lower;
pub(crate) mod node;
pub(crate) mod state_api;
pub(crate) mod subgraph;
mod validate;
