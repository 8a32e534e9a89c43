//! Kills a worker process at random points of a run and checks that the thread, once resumed,
//! keeps the promises of its durability mode.
//!
//! The harness ([`driver::run`]) starts the `crash-worker` binary on a fresh thread of the
//! [`workload`] (rounds of fan-out to seven parallel tasks, static and `Push`-mapped, folding into
//! reducer channels) with one durability [`mode`] (`sync`, `async` or `exit`) on a real saver
//! (MySQL, Redis or SQLite), kills it with SIGKILL at a point [`aim`] draws, waits until the server has
//! closed its sessions ([`backend`]), records what the saver holds ([`checks::Observation`]), and
//! starts a new worker that resumes the thread from its latest checkpoint (or starts the run again
//! when nothing is stored); until a worker completes the run. Nodes record each execution in a
//! side [`journal`] independent of the saver. Then [`checks`] verifies, per thread, the mode's
//! promises as [`mode`] states them: what a kill may lose, which work may run again, and that the
//! final history equals an uninterrupted [`reference`](mod@reference) run's. Every kill is put in a
//! [`coverage`] bucket, and a run whose mode has a bucket without kills fails.
//!
//! Run it with `cargo test -p crash` (the live tests skip without servers unless `CI` is set);
//! size and seed it with the variables of [`plan`].

pub mod aim;
pub mod backend;
pub mod checks;
pub mod coverage;
pub mod driver;
mod error;
pub mod journal;
pub mod mode;
pub mod pace;
pub mod plan;
pub mod reference;
pub mod slow_saves;
pub mod worker;
pub mod workload;

pub use checks::Violation;
pub use error::{Error, Result};
