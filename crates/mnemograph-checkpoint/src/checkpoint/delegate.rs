//! [`Delegate`]: a type that is a saver by handing every call to another one, such as a backend's
//! public type over [`ReadCache`](super::backend::ReadCache) and its store.

use super::{
    ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointTuple, Checkpointer, Commit, DynCheckpointer, ListOptions, PruneStrategy,
};

/// A type whose [`Checkpointer`] calls all go to [`saver`](Self::saver): it implements this one
/// method and is a saver, free to add methods of its own (settings, retention, pinning). The
/// saver is named by its object-safe form, so the type under it can stay private to its crate.
///
/// # Example
/// ```
/// use mnemograph_checkpoint::checkpoint::backend::Delegate;
/// use mnemograph_checkpoint::checkpoint::{CheckpointConfig, Checkpointer, DynCheckpointer, InMemoryCheckpointer};
///
/// /// The in-memory saver under another name, with a method of its own.
/// struct Named(&'static str, InMemoryCheckpointer);
///
/// impl Named {
///     fn name(&self) -> &str {
///         self.0
///     }
/// }
///
/// impl Delegate for Named {
///     fn saver(&self) -> &dyn DynCheckpointer {
///         &self.1
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let saver = Named("scratch", InMemoryCheckpointer::new());
/// let latest = Checkpointer::get_tuple(&saver, &CheckpointConfig::thread("t")).await.unwrap();
/// assert!(latest.is_none());
/// assert_eq!(saver.name(), "scratch");
/// # });
/// ```
pub trait Delegate: Send + Sync + 'static {
    /// The saver the calls go to.
    fn saver(&self) -> &dyn DynCheckpointer;
}

impl<T: Delegate> Checkpointer for T {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.saver().get_tuple(config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.saver().list(config, options).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.saver().put(config, checkpoint, metadata, new_versions).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.saver().put_writes(config, writes, task_id, task_path).await
    }

    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        self.saver().commit(commit).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.saver().delete_thread(thread_id).await
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        self.saver().delete_for_runs(run_ids).await
    }

    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        self.saver().copy_thread(source_thread_id, target_thread_id).await
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        self.saver().prune(thread_ids, strategy).await
    }

    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        self.saver().remembered_latest(config)
    }

    fn get_next_version(&self, current: Option<&str>) -> String {
        self.saver().get_next_version(current)
    }
}
