//! The [`Checkpointer`] trait and its object-safe twin [`DynCheckpointer`].

use std::future::Future;
use std::pin::Pin;

use super::{
    next_version, ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, CheckpointTuple, ListOptions,
};

/// A future returned by [`DynCheckpointer`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The pending writes of one task, as [`Checkpointer::put_writes`] takes them, carried by a
/// [`ChainLink`].
#[derive(Debug, Clone, Default)]
pub struct WriteBatch {
    /// The writing task.
    pub task_id: String,
    /// The writing task's path.
    pub task_path: String,
    /// `(channel, value)` pairs in the order the task wrote them.
    pub writes: Vec<(String, ChannelValue)>,
}

/// One checkpoint of [`Checkpointer::put_chain`], with the writes to save against its parent
/// before it.
#[derive(Debug, Clone)]
pub struct ChainLink {
    /// Pending writes of the parent's last task, if any.
    pub writes: Option<WriteBatch>,
    /// The checkpoint.
    pub checkpoint: Checkpoint,
    /// Its metadata.
    pub metadata: CheckpointMetadata,
    /// The channels whose values are new in it, as `put` takes them.
    pub new_versions: ChannelVersions,
}

/// Stores checkpoints and pending writes (LangGraph's `BaseCheckpointSaver`).
///
/// Implement it with `async fn`s; the engine uses it through [`DynCheckpointer`], which every
/// implementation gets for free.
pub trait Checkpointer: Send + Sync + 'static {
    /// The checkpoint at `config` (the latest of the thread/namespace when it has no id), with its
    /// pending writes; `None` when there is none.
    fn get_tuple(
        &self,
        config: &CheckpointConfig,
    ) -> impl Future<Output = Result<Option<CheckpointTuple>, CheckpointError>> + Send;

    /// Checkpoints newest first: of one thread and namespace, or of every thread when `config` is
    /// `None`.
    fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> impl Future<Output = Result<Vec<CheckpointTuple>, CheckpointError>> + Send;

    /// Saves a checkpoint. `config.checkpoint_id` is the parent; values are stored only for the
    /// channels in `new_versions`. Returns the address of the saved checkpoint.
    fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> impl Future<Output = Result<CheckpointConfig, CheckpointError>> + Send;

    /// Like [`put`](Self::put), but only if `config.checkpoint_id` (the parent; `None` for a
    /// namespace without checkpoints) is still the latest checkpoint of the thread and namespace.
    /// Otherwise nothing is saved and the call fails with [`CheckpointError::Conflict`].
    ///
    /// This is what keeps two workers that continue the same thread at once from forking it: the
    /// engine uses it for every checkpoint of a run that started from the latest checkpoint, and
    /// plain [`put`](Self::put) for the first checkpoint of a run started from an explicit
    /// `checkpoint_id` (time travel, which forks on purpose).
    ///
    /// The default implementation reads the latest checkpoint, compares, then calls `put`: it
    /// catches a writer that committed before the read, but two writers can still both pass the
    /// check before either saves. Backends should override it with an atomic check (a locking
    /// read in the put transaction, a compare inside a script, a compare under a lock); the savers
    /// of this workspace do.
    ///
    /// # Errors
    /// [`CheckpointError::Conflict`] when the parent is not the latest; otherwise as `put`.
    fn put_expecting_latest(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> impl Future<Output = Result<CheckpointConfig, CheckpointError>> + Send {
        async move {
            let latest = CheckpointConfig { checkpoint_id: None, ..config.clone() };
            let found = self.get_tuple(&latest).await?.and_then(|t| t.config.checkpoint_id);
            if found != config.checkpoint_id {
                return Err(CheckpointError::conflict(config, found));
            }
            self.put(config, checkpoint, metadata, new_versions).await
        }
    }

    /// Saves a task's writes against the checkpoint at `config`. Idempotent per `(task_id, idx)`;
    /// the special channels of [`WRITES_IDX_MAP`](super::WRITES_IDX_MAP) are upserted.
    fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send;

    /// Saves several checkpoints, each the child of the one before (the first is the child of
    /// `config`), each after the pending writes it carries, which are saved against its parent:
    /// in turn [`put_writes`](Self::put_writes) and [`put`](Self::put) (or, when
    /// `expect_latest`, [`put_expecting_latest`](Self::put_expecting_latest)) of every link.
    /// Returns the address of the last checkpoint.
    ///
    /// The engine calls this instead of those calls when nothing but its own bookkeeping happens
    /// between them: the last task of a step finishing and the checkpoint that follows, or a
    /// run's input checkpoint and the step that only routes the input. A saver can then make the
    /// whole chain durable at once, one transaction and one commit instead of one per call. The
    /// rows are the same as those of the separate calls. The default makes the calls in turn (a
    /// link after the first always expects its parent, just stored, to be the latest); an
    /// override should store all or nothing, so that on a conflict nothing of the chain is
    /// stored.
    ///
    /// # Errors
    /// [`CheckpointError::Invalid`] for an empty chain; otherwise as `put_writes`, `put` and
    /// `put_expecting_latest`.
    fn put_chain(
        &self,
        config: &CheckpointConfig,
        chain: Vec<ChainLink>,
        expect_latest: bool,
    ) -> impl Future<Output = Result<CheckpointConfig, CheckpointError>> + Send {
        async move {
            // Each link's parent is the address the previous put returned; the first's is `config`.
            let mut saved: Option<CheckpointConfig> = None;
            for (i, link) in chain.into_iter().enumerate() {
                let parent = saved.as_ref().unwrap_or(config);
                if let Some(batch) = link.writes {
                    self.put_writes(parent, batch.writes, &batch.task_id, &batch.task_path).await?;
                }
                let (checkpoint, metadata, versions) = (link.checkpoint, link.metadata, link.new_versions);
                saved = Some(if expect_latest || i > 0 {
                    self.put_expecting_latest(parent, checkpoint, metadata, versions).await?
                } else {
                    self.put(parent, checkpoint, metadata, versions).await?
                });
            }
            saved.ok_or_else(CheckpointError::empty_chain)
        }
    }

    /// Deletes every checkpoint, blob and write of a thread, in all namespaces.
    fn delete_thread(&self, thread_id: &str) -> impl Future<Output = Result<(), CheckpointError>> + Send;

    /// The latest checkpoint of `config`'s thread and namespace as this saver last stored it,
    /// from memory, without asking the backend whether it still is the latest; `None` when the
    /// saver remembers none (the default). Its `pending_writes` are left empty.
    ///
    /// A run with new input that starts from the thread's latest checkpoint spends a round trip
    /// on [`get_tuple`](Self::get_tuple) to learn what, when this process wrote the previous
    /// turn, it already knows. The engine starts such a run from this tuple instead (it discards
    /// the pending writes of the checkpoint it starts from anyway), and its first commit, a
    /// [`put_chain`](Self::put_chain) expecting that checkpoint to be the latest, checks what the
    /// read would have: a backend that moved on refuses with [`CheckpointError::Conflict`], and
    /// the engine then reads with `get_tuple` and runs the input again. It does so only when no
    /// code of the user's has run and nothing was streamed before that commit (durability
    /// `Sync`, no conditional edge from START, `invoke`), so the first attempt leaves no trace.
    ///
    /// Return `Some` only when the first `put_expecting_latest` / `put_chain` on the returned
    /// checkpoint is checked atomically by the backend, and also refuses when the checkpoint's
    /// stored row no longer is what this saver wrote (e.g. it was repaired in place).
    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        let _ = config;
        None
    }

    /// The version that follows `current` (LangGraph's string versions).
    fn get_next_version(&self, current: Option<&str>) -> String {
        next_version(current)
    }
}

/// The object-safe twin of [`Checkpointer`], implemented for every checkpointer.
pub trait DynCheckpointer: Send + Sync + 'static {
    /// See [`Checkpointer::get_tuple`].
    fn get_tuple<'a>(
        &'a self,
        config: &'a CheckpointConfig,
    ) -> BoxFuture<'a, Result<Option<CheckpointTuple>, CheckpointError>>;
    /// See [`Checkpointer::list`].
    fn list<'a>(
        &'a self,
        config: Option<&'a CheckpointConfig>,
        options: ListOptions,
    ) -> BoxFuture<'a, Result<Vec<CheckpointTuple>, CheckpointError>>;
    /// See [`Checkpointer::put`].
    fn put<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> BoxFuture<'a, Result<CheckpointConfig, CheckpointError>>;
    /// See [`Checkpointer::put_expecting_latest`].
    fn put_expecting_latest<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> BoxFuture<'a, Result<CheckpointConfig, CheckpointError>>;
    /// See [`Checkpointer::put_writes`].
    fn put_writes<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &'a str,
        task_path: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;
    /// See [`Checkpointer::put_chain`].
    fn put_chain<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        chain: Vec<ChainLink>,
        expect_latest: bool,
    ) -> BoxFuture<'a, Result<CheckpointConfig, CheckpointError>>;
    /// See [`Checkpointer::delete_thread`].
    fn delete_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>>;
    /// See [`Checkpointer::remembered_latest`].
    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple>;
    /// See [`Checkpointer::get_next_version`].
    fn get_next_version(&self, current: Option<&str>) -> String;
}

impl<T: Checkpointer> DynCheckpointer for T {
    fn get_tuple<'a>(
        &'a self,
        config: &'a CheckpointConfig,
    ) -> BoxFuture<'a, Result<Option<CheckpointTuple>, CheckpointError>> {
        Box::pin(Checkpointer::get_tuple(self, config))
    }
    fn list<'a>(
        &'a self,
        config: Option<&'a CheckpointConfig>,
        options: ListOptions,
    ) -> BoxFuture<'a, Result<Vec<CheckpointTuple>, CheckpointError>> {
        Box::pin(Checkpointer::list(self, config, options))
    }
    fn put<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> BoxFuture<'a, Result<CheckpointConfig, CheckpointError>> {
        Box::pin(Checkpointer::put(self, config, checkpoint, metadata, new_versions))
    }
    fn put_expecting_latest<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> BoxFuture<'a, Result<CheckpointConfig, CheckpointError>> {
        Box::pin(Checkpointer::put_expecting_latest(self, config, checkpoint, metadata, new_versions))
    }
    fn put_writes<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &'a str,
        task_path: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::put_writes(self, config, writes, task_id, task_path))
    }
    fn put_chain<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        chain: Vec<ChainLink>,
        expect_latest: bool,
    ) -> BoxFuture<'a, Result<CheckpointConfig, CheckpointError>> {
        Box::pin(Checkpointer::put_chain(self, config, chain, expect_latest))
    }
    fn delete_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::delete_thread(self, thread_id))
    }
    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        Checkpointer::remembered_latest(self, config)
    }
    fn get_next_version(&self, current: Option<&str>) -> String {
        Checkpointer::get_next_version(self, current)
    }
}
