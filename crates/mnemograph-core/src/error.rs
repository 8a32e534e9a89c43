//! The crate's error type.

use std::fmt;

use crate::checkpoint::CheckpointError;
use crate::state::InvalidUpdate;
use crate::value::ValueError;
pub use mnemograph_checkpoint::BoxError;

/// `Result` with mnemograph-core's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure of a graph run or of building a graph. An interrupt is not an error: it is an
/// outcome (see [`RunOutcome`](crate::RunOutcome)).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `compile()` found problems; every one is listed.
    #[error("graph did not compile:{}", DisplayIssues(.0))]
    InvalidGraph(Vec<GraphIssue>),
    /// The run took more supersteps than the recursion limit allows.
    #[error("recursion limit of {limit} reached without hitting a stop condition; you can increase the limit by setting `recursion_limit` in the run config")]
    RecursionLimit {
        /// The limit in force.
        limit: usize,
    },
    /// A superstep's writes broke a channel rule (LangGraph's `InvalidUpdateError`).
    #[error("invalid update from {nodes}")]
    InvalidUpdate {
        /// The node(s) whose writes were rejected, e.g. `"a" and "b"`.
        nodes: String,
        /// The rule that was broken.
        #[source]
        source: InvalidUpdate,
    },
    /// A node failed (after its retries).
    #[error("node `{node}` failed")]
    Node {
        /// The node.
        node: String,
        /// What it returned.
        #[source]
        source: BoxError,
    },
    /// The checkpointer failed.
    #[error("checkpointer failed")]
    Checkpoint(#[from] CheckpointError),
    /// A stored value does not fit the state's type.
    #[error("cannot restore state")]
    Value(#[from] ValueError),
    /// The run needs a thread id (a checkpointer is configured) but the config has none.
    #[error("a checkpointer is configured, so the run config needs a `thread_id`")]
    MissingThreadId,
    /// Nodes take a context, but none was given with `with_context`.
    #[error("the graph's nodes take a context of type `{0}`; give one with `with_context`")]
    MissingContext(&'static str),
    /// An operation needs a checkpointer and the graph has none.
    #[error("this operation needs a checkpointer; compile the graph with one")]
    NoCheckpointer,
    /// `update_state` named a node that does not exist.
    #[error("unknown node `{0}`")]
    UnknownNode(String),
    /// A node's `interrupt` was propagated out of a place the engine does not handle (e.g. a
    /// `?` in code outside a node). Inside a node it stops the run as an outcome instead.
    #[error(transparent)]
    Interrupt(#[from] crate::interrupt::NodeInterrupt),
    /// Resuming with a bare value while several interrupts are pending.
    #[error("when there are multiple pending interrupts, you must specify the interrupt id when resuming")]
    AmbiguousResume,
    /// A command input with no updates, no destinations and no resume value (LangGraph's
    /// `EmptyInputError`).
    #[error("received empty Command input")]
    EmptyInput,
}

impl Error {
    /// Whether the run failed because another writer committed to the thread first
    /// ([`CheckpointError::Conflict`]), directly or inside a subgraph node.
    ///
    /// The refused checkpoint was not saved, and the thread is still one chain of checkpoints.
    /// Checkpoints the run committed before it stay. With the default durability that includes
    /// the run's input checkpoint when the conflict came at a later step; the input it holds
    /// waits there as pending work, which the next run on the thread supersedes with its own
    /// input (as LangGraph does) or continues with [`Input::Resume`](crate::Input::Resume). With
    /// [`Durability::Exit`](crate::Durability::Exit) a run commits once, at its end, so a refused
    /// run committed nothing.
    /// [`CompiledGraph::invoke_retrying_conflicts`](crate::CompiledGraph::invoke_retrying_conflicts)
    /// retries the runs that committed nothing.
    pub fn is_conflict(&self) -> bool {
        match self {
            Self::Checkpoint(e) => e.is_conflict(),
            // A subgraph run inside a node reports its conflict as the node's failure.
            Self::Node { source, .. } => {
                source.downcast_ref::<Error>().is_some_and(Error::is_conflict)
                    || source.downcast_ref::<CheckpointError>().is_some_and(CheckpointError::is_conflict)
            }
            _ => false,
        }
    }
}

struct DisplayIssues<'a>(&'a [GraphIssue]);

impl fmt::Display for DisplayIssues<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for issue in self.0 {
            write!(f, "\n  - {issue}")?;
        }
        Ok(())
    }
}

/// One problem found by `compile()`.
///
/// Most are errors: [`Error::InvalidGraph`] lists them and nothing compiles. Two describe graphs
/// LangGraph compiles without complaint, [`UnreachableNode`](Self::UnreachableNode) and
/// [`EndlessLoop`](Self::EndlessLoop): they are warnings, which the compiled graph lists in
/// [`CompiledGraph::warnings`](crate::CompiledGraph::warnings).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphIssue {
    /// Two nodes share a name.
    #[error("node `{0}` is added more than once")]
    DuplicateNode(String),
    /// A node name is empty, reserved (`__start__`, `__end__`) or contains `:` or `|`.
    #[error("node name `{0}` is reserved or contains `:` or `|`")]
    ReservedName(String),
    /// An edge names a node that does not exist.
    #[error("edge {from:?} -> {to:?}: no node named {missing:?}{}", suggestion(.did_you_mean))]
    UnknownNode {
        /// Edge source.
        from: String,
        /// Edge target.
        to: String,
        /// The name that does not exist.
        missing: String,
        /// The closest existing name.
        did_you_mean: Option<String>,
    },
    /// Nothing leaves START.
    #[error("the graph has no entry point: add an edge from START")]
    NoEntryPoint,
    /// An edge starts at END.
    #[error("END cannot be the source of an edge")]
    EdgeFromEnd,
    /// An edge ends at START.
    #[error("START cannot be the target of an edge")]
    EdgeToStart,
    /// A breakpoint names a node that does not exist.
    #[error("interrupt_{when} names unknown node `{node}`")]
    UnknownBreakpoint {
        /// `before` or `after`.
        when: &'static str,
        /// The node.
        node: String,
    },
    /// The graph has no nodes.
    #[error("the graph has no nodes")]
    Empty,
    /// A warning: no edge leads to the node from START, no conditional edge or `Command` can
    /// send control to it, and no push can name it, so a run never reaches it.
    #[error("node `{0}` is not reachable from START")]
    UnreachableNode(String),
    /// A warning: once one of these nodes runs, they keep triggering one another through edges
    /// that always fire (plain edges, and conditional edges that always pick a node of the loop),
    /// so a run that reaches them ends only at the recursion limit. No static breakpoint stops it.
    #[error("a loop with no way out through {}: a run that reaches it ends at the recursion limit", names(.0))]
    EndlessLoop(Vec<String>),
}

fn names(nodes: &[String]) -> String {
    nodes.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}

fn suggestion(s: &Option<String>) -> String {
    s.as_ref().map(|s| format!(" (did you mean {s:?}?)")).unwrap_or_default()
}
