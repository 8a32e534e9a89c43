//! Reserved names: the virtual nodes a graph starts and ends at, and the engine's own channel and
//! task-kind names. They are LangGraph's, so checkpoints written by either side name the same things.

/// The name of the virtual entry node.
pub const START: &str = "__start__";
/// The name of the virtual exit node.
pub const END: &str = "__end__";

/// The channel that carries pushes to the next superstep (LangGraph's `TASKS`).
pub(crate) const TASKS: &str = "__pregel_tasks";
/// The kind of a task triggered by channels (LangGraph's `PULL`).
pub(crate) const PULL: &str = "__pregel_pull";
/// The kind of a task created by a [`Push`](crate::Push) (LangGraph's `PUSH`).
pub(crate) const PUSH: &str = "__pregel_push";
