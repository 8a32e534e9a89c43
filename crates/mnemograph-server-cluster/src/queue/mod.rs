//! The durable run queue several server or worker processes share: runs wait in a database
//! table, a worker claims one under a lease and renews it while it runs, and a run whose worker
//! stopped renewing (killed, partitioned) is claimed again by another worker, which resumes it
//! from the thread's last checkpoint.
//!
//! Two rules hold across processes: a thread has at most one run in progress, and a thread's
//! runs start in the order they were queued.

pub(crate) mod mysql;
mod worker;

pub use mysql::MySqlRunQueue;
pub use worker::{Worker, IDLE};

use std::time::Duration;

/// A run to queue.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct QueuedRun {
    /// The run's id.
    pub run_id: String,
    /// The thread it runs on.
    pub thread_id: String,
    /// What the worker needs to start it (the request, as JSON).
    pub payload: serde_json::Value,
}

impl QueuedRun {
    /// A run of `thread_id` with `payload`.
    pub fn new(run_id: impl Into<String>, thread_id: impl Into<String>, payload: serde_json::Value) -> Self {
        Self { run_id: run_id.into(), thread_id: thread_id.into(), payload }
    }
}

/// A run a worker holds under a lease.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Claim {
    /// The run.
    pub run: QueuedRun,
    /// The worker holding it.
    pub worker: String,
    /// 1 for a fresh run; more when the run is taken over after its worker's lease ran out: the
    /// worker then resumes the thread from its last checkpoint instead of starting over.
    pub attempt: u32,
}

/// How a run ended, as the queue records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Finished {
    /// Ran to the end (or stopped at an interrupt).
    Success,
    /// Failed.
    Error,
    /// Cancelled.
    Interrupted,
}

impl Finished {
    pub(crate) fn status(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::Interrupted => "interrupted",
        }
    }
}

/// How long a claim lasts without renewal, and how often a worker renews it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// A run whose lease is older than this is taken over.
    pub ttl: Duration,
}

impl Default for Lease {
    /// 30 s: several missed renewals (every 10 s) before another worker takes over.
    fn default() -> Self {
        Self { ttl: Duration::from_secs(30) }
    }
}

impl Lease {
    /// How often a worker renews: a third of the lease.
    pub fn renew_every(self) -> Duration {
        self.ttl / 3
    }
}
