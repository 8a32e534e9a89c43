//! # mnemograph-core
//!
//! A LangGraph-style graph runtime: a typed [`StateGraph`] whose fields are channels with
//! per-field reducers, run by a Pregel/superstep engine, with checkpoints in LangGraph's format.
//!
//! ```
//! use mnemograph_core::prelude::*;
//!
//! #[derive(State, Clone, Default, Debug)]
//! struct Counter {
//!     #[reducer(append)]
//!     log: Vec<String>,
//!     count: i64,
//! }
//!
//! async fn bump(s: Counter) -> Result<CounterUpdate> {
//!     Ok(CounterUpdate::count(s.count + 1).with_log(vec![format!("bump {}", s.count)]))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<()> {
//! let graph = StateGraph::<Counter>::new()
//!     .add_node("bump", bump)
//!     .add_edge(START, "bump")
//!     .add_conditional_edges("bump", |s: &Counter| if s.count < 3 { "bump" } else { END }, ())
//!     .compile_with(InMemoryCheckpointer::new())?;
//!
//! let config = RunConfig::thread("t1");
//! let out = graph.invoke(CounterUpdate::count(0), &config).await?;
//! assert_eq!(out.count, 3);
//! assert_eq!(out.log, ["bump 0", "bump 1", "bump 2"]);
//! # Ok(()) }
//! ```
//!
//! ## Concepts
//! - **State**: a struct with `#[derive(State)]`. Each field is a channel: a plain field keeps the
//!   last value written (two writes in one superstep are an error), a `#[reducer(f)]` field folds
//!   writes with `f` (`add_messages`, `append`, or any `fn(&mut T, T)`). The derive also makes an
//!   `…Update` struct with every field optional: what nodes return.
//! - **Nodes** are plain `async fn(State) -> Result<Update>` (or with a second [`Runtime`] argument
//!   for the run's context, the stream writer and task facts).
//! - **Supersteps**: all nodes triggered in a step read the same state, run concurrently, and their
//!   writes are applied together afterwards, in a fixed order (task path), never completion order.
//! - **Checkpoints** are written after every step to a [`Checkpointer`](checkpoint::Checkpointer),
//!   in LangGraph's v4 format, so a thread can be resumed, inspected and time-travelled.
//!
//! ## Features
//! | feature | default | what |
//! |---|---|---|
//! | `macros` | yes | re-exports `#[derive(State)]` |

#![cfg_attr(docsrs, feature(doc_cfg))]

mod command;
mod config;
mod constants;
mod error;
mod graph;
mod interrupt;
pub mod messages;
mod pregel;
mod retry;
mod runtime;
pub mod state;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod stream;

pub use command::{Command, Goto, Input, IntoNodeOutput, NodeOutput, Push, Route};
pub use config::{Durability, RunConfig, DEFAULT_RECURSION_LIMIT};
pub use constants::{END, START};
pub use error::{BoxError, Error, GraphIssue, Result};
pub use graph::branch::IntoPathMap;
pub use graph::builder::{NodeOptions, StateGraph};
pub use graph::compiled::CompiledGraph;
pub use graph::draw::{GraphEdge, GraphLayout};
pub use graph::invoke::GraphStream;
pub use graph::node::{node, IntoNode};
pub use graph::state_api::{SnapshotTask, StateSnapshot};
pub use interrupt::{Breakpoint, Interrupt, NodeInterrupt, Resume, RunOutcome};
pub use mnemograph_checkpoint::{checkpoint, store, value, BoxFuture};
pub use pregel::node::BoxedNode;
pub use retry::RetryPolicy;
pub use runtime::Runtime;
pub use state::State;
pub use stream::{EventMetadata, StreamEvent, StreamMode, StreamModes, TaskEvent};

#[cfg(feature = "macros")]
pub use mnemograph_macros::State;

/// Everything a graph author usually needs.
pub mod prelude {
    pub use crate::checkpoint::{Checkpointer, InMemoryCheckpointer};
    pub use crate::messages::{
        add_messages, Message, MessagesState, MessagesStateUpdate, REMOVE_ALL_MESSAGES,
    };
    pub use crate::state::append;
    pub use crate::{
        Command, CompiledGraph, Durability, Error, Input, NodeOptions, Push, Result, Resume, RetryPolicy,
        RunConfig, RunOutcome, Runtime, State, StateGraph, StreamEvent, StreamMode, END, START,
    };
    pub use futures_core::Stream;
    pub use futures_util::StreamExt;
}
