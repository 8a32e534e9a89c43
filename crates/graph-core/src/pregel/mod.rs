//! The Pregel engine: supersteps over channels (LangGraph's `pregel/`).
//!
//! - [`channels`]: the run's channel table and the pure `prepare_tasks` / `apply_writes` steps;
//! - [`task`]: tasks, their deterministic ids, routing a node's output to edge channels;
//! - [`persist`]: converting the channel table to and from LangGraph's checkpoint model;
//! - [`version_text`]: the texts of a run's channel versions;
//! - [`commit`]: saving checkpoints, refusing one whose parent is no longer the latest;
//! - [`run`]: the superstep loop (IO, concurrency, retries, streaming).

pub(crate) mod channels;
pub(crate) mod commit;
pub(crate) mod persist;
pub(crate) mod run;
pub(crate) mod task;
pub(crate) mod version_text;
