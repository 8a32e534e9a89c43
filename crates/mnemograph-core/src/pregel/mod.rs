//! The Pregel engine: supersteps over channels (LangGraph's `pregel/`). It runs a [`plan`] and
//! knows nothing of the builder that made it.
//!
//! - [`plan`]: the channels and nodes a run works on, addressed by index;
//! - [`node`]: nodes as the engine calls them;
//! - [`runnable`]: a plan bound to its saver, store and context;
//! - [`channels`]: the run's channel table, one file per kind of channel;
//! - [`step`]: the pure halves of a superstep, `prepare_tasks` and `apply_writes`;
//! - [`task`]: tasks, their deterministic ids, routing a node's output to edge channels;
//! - [`blocking`]: running a node's future on a thread of the blocking pool;
//! - [`persist`]: converting the channel table to and from LangGraph's checkpoint model;
//! - [`version_text`]: the texts of a run's channel versions;
//! - [`commit`]: saving checkpoints, refusing one whose parent is no longer the latest;
//! - [`saver_spans`]: the spans of the engine's calls to its saver;
//! - [`run`]: the superstep loop (IO, concurrency, retries, streaming).

mod blocking;
pub(crate) mod channels;
pub(crate) mod commit;
pub(crate) mod node;
pub(crate) mod persist;
pub(crate) mod plan;
pub(crate) mod run;
pub(crate) mod runnable;
pub(crate) mod saver_spans;
mod step;
pub(crate) mod task;
pub(crate) mod version_text;
