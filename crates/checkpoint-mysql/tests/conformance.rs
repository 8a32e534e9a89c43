//! The checkpointer conformance suite against MySQL/MariaDB (`MYSQL_URL`).
//!
//! Every test shares one migrated database; the suite gives each test its own thread ids. Without
//! a reachable server (and without `CI` set) each test prints that MySQL was skipped and runs the
//! suite against the in-memory saver instead, so the test bodies still execute.

mod support;

use checkpoint_mysql::MySqlCheckpointer;
use graph_core::checkpoint::{
    ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointTuple, Checkpointer, InMemoryCheckpointer, ListOptions,
};

/// The MySQL saver, or the in-memory one when MySQL was skipped.
enum Saver {
    MySql(MySqlCheckpointer),
    Skipped(InMemoryCheckpointer),
}

async fn saver() -> Saver {
    match support::saver().await {
        Some(saver) => Saver::MySql(saver),
        None => Saver::Skipped(InMemoryCheckpointer::new()),
    }
}

graph_test::checkpointer_conformance!(saver);

/// Forwards a call to whichever saver is inside.
macro_rules! forward {
    ($self:ident, $saver:ident => $call:expr) => {
        match $self {
            Saver::MySql($saver) => $call.await,
            Saver::Skipped($saver) => $call.await,
        }
    };
}

impl Checkpointer for Saver {
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
