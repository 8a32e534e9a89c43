//! The shared checkpointer conformance suite against a real Redis (`REDIS_URL`, default
//! `redis://127.0.0.1:6379/`), in full-history mode under a test key prefix, with a one-hour TTL
//! so test threads do not pile up on a shared server.
//!
//! Every suite function uses fresh random thread ids, so the tests run in parallel on one
//! server and leave other data alone. Without a reachable server (and `CI` unset) each test
//! prints that it was skipped and runs the suite on the in-memory saver instead, so the macro's
//! tests still pass; under CI a missing server fails them.

mod support;

use std::time::Duration;

use checkpoint_redis::RedisCheckpointer;
use graph_core::checkpoint::{
    ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointTuple, Checkpointer, InMemoryCheckpointer, ListOptions,
};

/// The saver the suite runs on.
enum Target {
    /// The real thing.
    Redis(RedisCheckpointer),
    /// No server outside CI: the suite still runs, on the in-memory saver, after a printed skip.
    Skipped(InMemoryCheckpointer),
}

async fn saver() -> Target {
    let builder = RedisCheckpointer::builder().key_prefix("graph-test:conf").ttl(Duration::from_secs(3600));
    match support::saver_with(builder).await {
        Some(saver) => Target::Redis(saver),
        None => Target::Skipped(InMemoryCheckpointer::new()),
    }
}

graph_test::checkpointer_conformance!(saver);

/// Forwards every call to the chosen saver.
macro_rules! forward {
    ($self:ident, $s:ident => $call:expr) => {
        match $self {
            Target::Redis($s) => $call.await,
            Target::Skipped($s) => $call.await,
        }
    };
}

impl Checkpointer for Target {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        forward!(self, s => s.get_tuple(config))
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        forward!(self, s => s.list(config, options))
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        forward!(self, s => s.put(config, checkpoint, metadata, new_versions))
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        forward!(self, s => s.put_writes(config, writes, task_id, task_path))
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        forward!(self, s => s.delete_thread(thread_id))
    }
}
