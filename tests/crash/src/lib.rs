//! Kills a worker process at random points of a run and checks that resuming loses and repeats
//! nothing.
//!
//! The harness ([`driver::run`]) starts the `crash-worker` binary on a fresh thread of the
//! [`workload`] (rounds of fan-out to seven parallel tasks, static and `Push`-mapped, folding into
//! reducer channels) with `sync` durability on a real saver (MySQL or Redis), waits a random time,
//! SIGKILLs it, waits until the server has closed its sessions ([`backend`]), records what the
//! saver holds ([`checks::Observation`]), and starts a new worker that resumes the thread from its
//! latest checkpoint; until a worker completes the run. Nodes record each execution in a side
//! [`journal`] independent of the saver. Then [`checks`] verifies, per thread: the history is a
//! valid chain whose states equal an uninterrupted run's, no write the saver once held was lost,
//! and no task whose writes the saver held ran again.
//!
//! Run it with `cargo test -p crash` (the live tests skip without servers unless `CI` is set);
//! size and seed it with the variables of [`plan`].

pub mod backend;
pub mod checks;
pub mod driver;
mod error;
pub mod journal;
pub mod plan;
pub mod worker;
pub mod workload;

pub use checks::Violation;
pub use error::{Error, Result};
