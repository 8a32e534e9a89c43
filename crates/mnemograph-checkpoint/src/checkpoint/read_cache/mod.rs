//! [`ReadCache`]: a layer over a saver that remembers the checkpoint it stored last per thread,
//! so that reading it back, or starting the next run from it, costs less.
//!
//! A run starts by reading the latest checkpoint of its thread, which is usually the one the same
//! process stored at the end of the previous turn. For a saver over the network that read moves
//! every value of the checkpoint again (a long conversation's whole message list) and decodes it
//! again. The layer remembers what it stored and asks the backend only *whether* the latest
//! checkpoint is still that one, unchanged, and what pending writes it has
//! ([`Fingerprinted::confirm`]); it answers from memory when it is. The backend is asked every
//! time, so a checkpoint another process wrote is never hidden; only bytes that cannot have
//! changed are not sent again.
//!
//! A backend whose commit can also refuse a remembered parent whose stored form changed lets the
//! engine skip even that question: the run starts from memory
//! ([`Checkpointer::remembered_latest`]) and its first commit checks what the read would have.

mod recent;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use recent::RecentCheckpoints;

use super::{
    ChainLink, ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError,
    CheckpointMetadata, CheckpointTuple, Checkpointer, Commit, ExpectParent, ListOptions, PendingWrite,
    PruneStrategy,
};

/// How many (thread, namespace) pairs [`ReadCache`] keeps by default.
pub const DEFAULT_RECENT_CAPACITY: usize = 1024;

/// What a saver offers so that [`ReadCache`] can keep its checkpoints: a fingerprint of what it
/// stored for each, and a cheap check that a checkpoint is still stored that way.
pub trait Fingerprinted: Checkpointer {
    /// What the saver compares with a stored checkpoint to tell it is unchanged (its stored bytes,
    /// say).
    type Fingerprint: Send + Sync + 'static;

    /// [`commit`](Checkpointer::commit), returning the fingerprint of every stored link in order
    /// with the address of the last one.
    ///
    /// `parent` is the fingerprint the layer remembers of the commit's parent, given when the
    /// commit expects that parent to be the latest. A saver that can, refuses with
    /// [`CheckpointError::Conflict`] when the parent's stored form is no longer `parent`, in the
    /// same atomic check as the parent's place, and then says so in
    /// [`checks_remembered_parent`](Self::checks_remembered_parent).
    fn commit_fingerprinted(
        &self,
        commit: &Commit,
        parent: Option<&Self::Fingerprint>,
    ) -> impl Future<Output = Result<(CheckpointConfig, Vec<Self::Fingerprint>), CheckpointError>> + Send;

    /// The pending writes of checkpoint `id` of `config`'s namespace when it is stored as
    /// `fingerprint` and, when `config` names no checkpoint, is the namespace's latest; `None`
    /// otherwise (another writer, a prune, a delete, an edit), and the layer then reads in full.
    fn confirm(
        &self,
        config: &CheckpointConfig,
        id: &str,
        fingerprint: &Self::Fingerprint,
    ) -> impl Future<Output = Result<Option<Vec<PendingWrite>>, CheckpointError>> + Send;

    /// Whether [`commit_fingerprinted`](Self::commit_fingerprinted) refuses a parent whose stored
    /// form is not the fingerprint given, so that a run may start from a remembered checkpoint
    /// unread. False by default.
    fn checks_remembered_parent(&self) -> bool {
        false
    }
}

/// A saver with a memory of the checkpoint it stored last for each of the most recently written
/// (thread, namespace) pairs.
///
/// A read of a remembered checkpoint asks the saver only whether it is still the one wanted,
/// unchanged, and for its pending writes ([`Fingerprinted::confirm`]), and answers from memory when
/// it is; another process's checkpoint is never hidden. When the saver's commit also refuses a
/// remembered parent whose stored form changed ([`Fingerprinted::checks_remembered_parent`]), a
/// run with new input starts from memory without reading at all
/// ([`Checkpointer::remembered_latest`]), and its first commit checks what the read would have.
///
/// Clones share the memory.
///
/// # Example
/// ```
/// use mnemograph_checkpoint::checkpoint::backend::{Fingerprinted, ReadCache};
/// use mnemograph_checkpoint::checkpoint::{
///     ChainLink, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource,
///     CheckpointTuple, Checkpointer, Commit, ExpectParent, InMemoryCheckpointer, PendingWrite,
/// };
///
/// /// The in-memory saver, fingerprinting a checkpoint by its id.
/// struct ById(InMemoryCheckpointer);
///
/// impl Checkpointer for ById {
///     async fn get_tuple(&self, c: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
///         self.0.get_tuple(c).await
///     }
///     // ... `list`, `put`, `put_writes`, `delete_thread` and `commit` forward the same way.
/// #   async fn list(&self, c: Option<&CheckpointConfig>, o: mnemograph_checkpoint::checkpoint::ListOptions)
/// #       -> Result<Vec<CheckpointTuple>, CheckpointError> { self.0.list(c, o).await }
/// #   async fn put(&self, c: &CheckpointConfig, cp: Checkpoint, m: CheckpointMetadata,
/// #       v: mnemograph_checkpoint::checkpoint::ChannelVersions) -> Result<CheckpointConfig, CheckpointError> {
/// #       self.0.put(c, cp, m, v).await }
/// #   async fn put_writes(&self, c: &CheckpointConfig, w: Vec<(String, mnemograph_checkpoint::value::ChannelValue)>,
/// #       t: &str, p: &str) -> Result<(), CheckpointError> { self.0.put_writes(c, w, t, p).await }
/// #   async fn delete_thread(&self, t: &str) -> Result<(), CheckpointError> { self.0.delete_thread(t).await }
/// #   async fn commit(&self, c: Commit) -> Result<CheckpointConfig, CheckpointError> { self.0.commit(c).await }
/// }
///
/// impl Fingerprinted for ById {
///     type Fingerprint = String;
///     async fn commit_fingerprinted(
///         &self,
///         commit: &Commit,
///         _parent: Option<&String>,
///     ) -> Result<(CheckpointConfig, Vec<String>), CheckpointError> {
///         let ids = commit.chain.iter().map(|l| l.checkpoint.id.clone()).collect();
///         Ok((self.0.commit(commit.clone()).await?, ids))
///     }
///     async fn confirm(
///         &self,
///         config: &CheckpointConfig,
///         id: &str,
///         _fingerprint: &String,
///     ) -> Result<Option<Vec<PendingWrite>>, CheckpointError> {
///         let latest = self.0.get_tuple(config).await?;
///         Ok(latest.filter(|t| t.checkpoint.id == id).map(|t| t.pending_writes))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let saver = ReadCache::new(ById(InMemoryCheckpointer::new()));
/// let link = ChainLink::new(
///     Checkpoint { id: "1".into(), ..Checkpoint::default() },
///     CheckpointMetadata::new(CheckpointSource::Input, -1),
///     Default::default(),
/// );
/// let thread = CheckpointConfig::thread("t1");
/// saver.commit(Commit::new(thread.clone(), vec![link], ExpectParent::Latest)).await.unwrap();
/// assert_eq!(saver.remembered_threads(), 1);
/// let latest = saver.get_tuple(&thread).await.unwrap().expect("stored");
/// assert_eq!(latest.checkpoint.id, "1");
/// # });
/// ```
pub struct ReadCache<S: Fingerprinted> {
    /// The saver.
    saver: S,
    /// What it stored last, shared by clones.
    recent: Arc<RecentCheckpoints<S::Fingerprint>>,
}

impl<S: Fingerprinted> ReadCache<S> {
    /// `saver`, remembering [`DEFAULT_RECENT_CAPACITY`] (thread, namespace) pairs.
    pub fn new(saver: S) -> Self {
        Self::with_capacity(saver, DEFAULT_RECENT_CAPACITY)
    }

    /// `saver`, remembering at most `capacity` (thread, namespace) pairs (0: none); the least
    /// recently written are forgotten first.
    pub fn with_capacity(saver: S, capacity: usize) -> Self {
        Self { saver, recent: Arc::new(RecentCheckpoints::new(capacity)) }
    }

    /// The saver under the layer.
    pub fn saver(&self) -> &S {
        &self.saver
    }

    /// The saver under the layer, to change its settings. Changing what it stores, or where,
    /// leaves the memory stale: the layer confirms before it answers, so a stale entry costs a
    /// full read, never a wrong one.
    pub fn saver_mut(&mut self) -> &mut S {
        &mut self.saver
    }

    /// The saver under the layer, without the layer.
    pub fn into_saver(self) -> S {
        self.saver
    }

    /// How many (thread, namespace) pairs it remembers at most.
    pub fn capacity(&self) -> usize {
        self.recent.capacity()
    }

    /// How many (thread, namespace) pairs it remembers now.
    pub fn remembered_threads(&self) -> usize {
        self.recent.len()
    }

    /// Forgets every namespace of `thread_id`: for a saver's own operations beside the
    /// [`Checkpointer`] calls (a prune, say) that remove checkpoints. Not needed for
    /// correctness, since every answer from memory is confirmed first.
    pub fn forget_thread(&self, thread_id: &str) {
        self.recent.forget_thread(thread_id);
    }

    /// Remembers the links of `commit`, just stored as `fingerprints`, in order: each link's
    /// unchanged channels are known through the one before.
    fn remember(&self, commit: &Commit, fingerprints: Vec<S::Fingerprint>) {
        for ((parent, link), fingerprint) in commit.links().zip(fingerprints) {
            let ChainLink { checkpoint, metadata, new_versions, .. } = link;
            self.recent.remember(&parent, checkpoint, metadata, new_versions, fingerprint);
        }
    }
}

impl<S: Fingerprinted + Clone> Clone for ReadCache<S> {
    fn clone(&self) -> Self {
        Self { saver: self.saver.clone(), recent: Arc::clone(&self.recent) }
    }
}

impl<S: Fingerprinted + fmt::Debug> fmt::Debug for ReadCache<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadCache")
            .field("saver", &self.saver)
            .field("capacity", &self.recent.capacity())
            .field("remembered", &self.recent.len())
            .finish()
    }
}

impl<S: Fingerprinted> Checkpointer for ReadCache<S> {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        if let Some(entry) = self.recent.candidate(config) {
            let id = entry.checkpoint.id.as_str();
            if let Some(writes) = self.saver.confirm(config, id, &entry.fingerprint).await? {
                return Ok(Some(entry.tuple(config, writes)));
            }
        }
        self.saver.get_tuple(config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.saver.list(config, options).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.commit(Commit::put(config, checkpoint, metadata, new_versions)).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.saver.put_writes(config, writes, task_id, task_path).await
    }

    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        // The parent's fingerprint matters only to a check that the parent is the latest.
        let remembered = match (commit.expect, &commit.parent.checkpoint_id) {
            (ExpectParent::Latest, Some(_)) => self.recent.candidate(&commit.parent),
            _ => None,
        };
        let parent = remembered.as_ref().map(|entry| &entry.fingerprint);
        match self.saver.commit_fingerprinted(&commit, parent).await {
            Ok((saved, fingerprints)) => {
                self.remember(&commit, fingerprints);
                Ok(saved)
            }
            Err(e) => {
                if matches!(e, CheckpointError::Conflict { .. }) {
                    // What is remembered of the namespace is not its latest any more.
                    self.recent.forget_thread(&commit.parent.thread_id);
                }
                Err(e)
            }
        }
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.recent.forget_thread(thread_id);
        self.saver.delete_thread(thread_id).await
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        // Forgotten before and after: a commit racing the delete may remember a checkpoint of
        // one of these runs in between.
        self.recent.forget_runs(run_ids);
        let deleted = self.saver.delete_for_runs(run_ids).await;
        self.recent.forget_runs(run_ids);
        deleted
    }

    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        // The source is unchanged; the target's latest checkpoints are the copies now.
        let copied = self.saver.copy_thread(source_thread_id, target_thread_id).await;
        self.recent.forget_thread(target_thread_id);
        copied
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        for thread_id in thread_ids {
            self.recent.forget_thread(thread_id);
        }
        self.saver.prune(thread_ids, strategy).await
    }

    fn remembered_latest(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        if config.checkpoint_id.is_some() || !self.saver.checks_remembered_parent() {
            return None;
        }
        self.recent.candidate(config).map(|entry| entry.tuple(config, Vec::new()))
    }

    fn get_next_version(&self, current: Option<&str>) -> String {
        self.saver.get_next_version(current)
    }
}
