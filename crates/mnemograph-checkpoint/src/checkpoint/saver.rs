//! The [`Checkpointer`] trait and its object-safe twin [`DynCheckpointer`].

use std::future::Future;

pub use futures_util::future::BoxFuture;

use super::commit::{Commit, ExpectParent};
use super::{
    next_version, ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, CheckpointTuple, ListOptions, PruneStrategy,
};

/// Stores checkpoints and pending writes (LangGraph's `BaseCheckpointSaver`).
///
/// A saver implements LangGraph's five operations ([`get_tuple`](Self::get_tuple),
/// [`list`](Self::list), [`put`](Self::put), [`put_writes`](Self::put_writes),
/// [`delete_thread`](Self::delete_thread)) and, when its backend can compare and store
/// atomically, overrides [`commit`](Self::commit), the one call the engine stores through. That
/// is the whole contract; the conformance suite of `mnemograph-test` checks it.
///
/// LangGraph's three extended capabilities, [`delete_for_runs`](Self::delete_for_runs),
/// [`copy_thread`](Self::copy_thread) and [`prune`](Self::prune), are optional: their defaults
/// fail with [`CheckpointError::Unsupported`] and change nothing, as Python's
/// `BaseCheckpointSaver` raises `NotImplementedError`. Every saver of this workspace implements
/// them. ReadCache the checkpoints a
/// process stored, so that reading them back costs less, is a layer on top
/// ([`ReadCache`](super::backend::ReadCache)), not part of it.
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

    /// Saves a task's writes against the checkpoint at `config`. Idempotent per `(task_id, idx)`;
    /// the special channels of [`WRITES_IDX_MAP`](super::WRITES_IDX_MAP) are upserted.
    fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send;

    /// Stores the checkpoints of `commit` and the pending writes they carry, each checkpoint the
    /// child of the one before; returns the address of the last one. With
    /// [`ExpectParent::Latest`](super::ExpectParent::Latest), only while the first one's parent is
    /// the latest checkpoint of its thread and namespace: otherwise nothing is stored and the
    /// call fails with [`CheckpointError::Conflict`].
    ///
    /// The engine stores checkpoints through this call only. A run that continues its thread
    /// expects the latest parent; a run started from an explicit older checkpoint (time travel)
    /// commits its first checkpoint expecting nothing, because forking is what it asked for. A
    /// commit holds several checkpoints when nothing but the engine's bookkeeping happens between
    /// them (a step's last task finishing and the checkpoint that follows, or a run's input
    /// checkpoint and the step that only routes it), so a saver can make them durable at once.
    ///
    /// The default calls [`put_writes`](Self::put_writes) and [`put`](Self::put) for every link
    /// in turn, after reading the latest checkpoint to compare with the parent. Two writers can
    /// both pass that check before either stores, so a saver whose backend can compare and store
    /// atomically (a locking read in one transaction, a script, a lock) overrides this with one
    /// that does, and stores all links or none.
    ///
    /// # Errors
    /// [`CheckpointError::Conflict`] when the parent is not the latest as expected;
    /// [`CheckpointError::Invalid`] for an empty chain; otherwise as `put_writes` and `put`.
    fn commit(
        &self,
        commit: Commit,
    ) -> impl Future<Output = Result<CheckpointConfig, CheckpointError>> + Send {
        in_turn(self, commit)
    }

    /// Deletes every checkpoint, blob and write of a thread, in all namespaces.
    fn delete_thread(&self, thread_id: &str) -> impl Future<Output = Result<(), CheckpointError>> + Send;

    /// Deletes every checkpoint whose metadata `run_id` is one of `run_ids`, in any thread and
    /// namespace, with its pending writes (LangGraph's `delete_for_runs`). Checkpoints of other
    /// runs stay, even when their `parent_config` then names a deleted checkpoint; an empty list,
    /// or ids no checkpoint carries, change nothing.
    ///
    /// # Errors
    /// [`CheckpointError::Unsupported`] by default; otherwise as the backend fails (nothing is
    /// deleted then, where the backend can make it one transaction).
    fn delete_for_runs(
        &self,
        run_ids: &[String],
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send {
        let _ = run_ids;
        std::future::ready(Err(CheckpointError::unsupported("delete_for_runs")))
    }

    /// Copies every checkpoint of `source_thread_id`, in all namespaces, with its metadata,
    /// parent and pending writes, to `target_thread_id` (LangGraph's `copy_thread`). The copies
    /// keep their checkpoint ids, so the target lists the same history in the same order, and the
    /// source is unchanged. A source with no checkpoint copies nothing.
    ///
    /// The target must have no checkpoint: merging two histories under one thread would make the
    /// latest of each namespace whichever id sorts last, so a target with checkpoints is refused
    /// with [`CheckpointError::Invalid`] and nothing is written.
    ///
    /// # Errors
    /// [`CheckpointError::Unsupported`] by default; [`CheckpointError::Invalid`] when the target
    /// has checkpoints; otherwise as the backend fails.
    fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send {
        let _ = (source_thread_id, target_thread_id);
        std::future::ready(Err(CheckpointError::unsupported("copy_thread")))
    }

    /// Prunes each thread of `thread_ids` (LangGraph's `prune`): with
    /// [`PruneStrategy::KeepLatest`], keeps the latest checkpoint of every namespace and its
    /// pending writes and removes the rest; with [`PruneStrategy::Delete`], removes the thread as
    /// [`delete_thread`](Self::delete_thread) does. Threads not listed, and ids of threads that do
    /// not exist, are left alone.
    ///
    /// # Errors
    /// [`CheckpointError::Unsupported`] by default; otherwise as the backend fails.
    fn prune(
        &self,
        thread_ids: &[String],
        strategy: PruneStrategy,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send {
        let _ = (thread_ids, strategy);
        std::future::ready(Err(CheckpointError::unsupported("prune")))
    }

    /// The latest checkpoint of `config`'s thread and namespace as this saver last stored it,
    /// from memory, without asking the backend; `None` (the default) when it remembers none.
    ///
    /// A saver leaves this alone: the [`ReadCache`](super::backend::ReadCache) layer answers
    /// it for savers whose commit checks a remembered parent. The engine starts a run with new
    /// input from this tuple instead of reading the thread back, and its first commit, expecting
    /// that checkpoint to be the latest, checks what the read would have: a refusal sends the run
    /// to a real read (only while nothing of the user's has run or been streamed).
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
    /// See [`Checkpointer::put_writes`].
    fn put_writes<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &'a str,
        task_path: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;
    /// See [`Checkpointer::commit`].
    fn commit(&self, commit: Commit) -> BoxFuture<'_, Result<CheckpointConfig, CheckpointError>>;
    /// See [`Checkpointer::delete_thread`].
    fn delete_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>>;
    /// See [`Checkpointer::delete_for_runs`].
    fn delete_for_runs<'a>(&'a self, run_ids: &'a [String]) -> BoxFuture<'a, Result<(), CheckpointError>>;
    /// See [`Checkpointer::copy_thread`].
    fn copy_thread<'a>(
        &'a self,
        source_thread_id: &'a str,
        target_thread_id: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;
    /// See [`Checkpointer::prune`].
    fn prune<'a>(
        &'a self,
        thread_ids: &'a [String],
        strategy: PruneStrategy,
    ) -> BoxFuture<'a, Result<(), CheckpointError>>;
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
    fn put_writes<'a>(
        &'a self,
        config: &'a CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &'a str,
        task_path: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::put_writes(self, config, writes, task_id, task_path))
    }
    fn commit(&self, commit: Commit) -> BoxFuture<'_, Result<CheckpointConfig, CheckpointError>> {
        Box::pin(Checkpointer::commit(self, commit))
    }
    fn delete_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::delete_thread(self, thread_id))
    }
    fn delete_for_runs<'a>(&'a self, run_ids: &'a [String]) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::delete_for_runs(self, run_ids))
    }
    fn copy_thread<'a>(
        &'a self,
        source_thread_id: &'a str,
        target_thread_id: &'a str,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::copy_thread(self, source_thread_id, target_thread_id))
    }
    fn prune<'a>(
        &'a self,
        thread_ids: &'a [String],
        strategy: PruneStrategy,
    ) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::prune(self, thread_ids, strategy))
    }
    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        Checkpointer::remembered_latest(self, config)
    }
    fn get_next_version(&self, current: Option<&str>) -> String {
        Checkpointer::get_next_version(self, current)
    }
}

/// [`Checkpointer::commit`] made of the five operations: for every link in turn, its writes
/// with `put_writes`, then its checkpoint with `put`, after reading the latest checkpoint to
/// compare with the parent when the parent is expected to be the latest.
///
/// Two writers can both pass such a check before either stores, so a saver whose backend can
/// compare and store atomically overrides `commit`.
async fn in_turn<S: Checkpointer + ?Sized>(
    saver: &S,
    commit: Commit,
) -> Result<CheckpointConfig, CheckpointError> {
    if commit.chain.is_empty() {
        return Err(CheckpointError::empty_chain());
    }
    let Commit { mut parent, chain, expect } = commit;
    for (i, link) in chain.into_iter().enumerate() {
        if expect == ExpectParent::Latest || i > 0 {
            let latest = CheckpointConfig { checkpoint_id: None, ..parent.clone() };
            let found = saver.get_tuple(&latest).await?.and_then(|t| t.config.checkpoint_id);
            if found != parent.checkpoint_id {
                return Err(CheckpointError::conflict(&parent, found));
            }
        }
        if let Some(batch) = link.writes {
            saver.put_writes(&parent, batch.writes, &batch.task_id, &batch.task_path).await?;
        }
        parent = saver.put(&parent, link.checkpoint, link.metadata, link.new_versions).await?;
    }
    Ok(parent)
}
