//! What mnemograph-server-cluster calls on the server's public types, kept off their public API:
//! methods of traits that only `__cluster` exports, and functions.

use mnemograph_core::RunConfig;
use serde_json::{Map, Value};

use crate::auth::{Grant, Identity};
use crate::error::Result;
use crate::hooks::RunContext;
use crate::limits::Limits;

/// A grant's metadata rules, as the process's own keepers apply them.
pub trait GrantRules {
    /// The metadata the things of this grant hold, empty for all.
    fn filter(&self) -> &Map<String, Value>;
    /// Whether a thing with `metadata` is one this grant reaches.
    fn admits(&self, metadata: &Map<String, Value>) -> bool;
    /// Writes the grant's keys over `metadata`, after the client's own.
    fn stamp(&self, metadata: &mut Map<String, Value>);
}

impl GrantRules for Grant {
    fn filter(&self) -> &Map<String, Value> {
        Grant::filter(self)
    }

    fn admits(&self, metadata: &Map<String, Value>) -> bool {
        Grant::admits(self, metadata)
    }

    fn stamp(&self, metadata: &mut Map<String, Value>) {
        Grant::stamp(self, metadata);
    }
}

/// The cap on the runs waiting on one thread.
pub trait QueueLimit {
    /// Refuses a run that would wait behind `waiting` runs on its thread.
    ///
    /// # Errors
    /// [`ServerError::TooManyRequests`](crate::ServerError::TooManyRequests) at the cap.
    fn check_queue(&self, waiting: usize) -> Result<()>;
}

impl QueueLimit for Limits {
    fn check_queue(&self, waiting: usize) -> Result<()> {
        Limits::check_queue(self, waiting)
    }
}

/// Reads back the caller `Identity::to_json` wrote.
pub fn identity_from_json(value: &Value) -> Option<Identity> {
    Identity::from_json(value)
}

/// The hooks' context of run `run_id` on `thread_id`, configured by `config`.
pub fn run_context(thread_id: String, run_id: String, config: &RunConfig) -> RunContext {
    RunContext::of(thread_id, run_id, config)
}
