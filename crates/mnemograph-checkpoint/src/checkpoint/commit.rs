//! [`Commit`]: what the engine hands a saver to make durable at once, and what it expects of the
//! parent the first checkpoint builds on.

use super::{ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata};

/// The pending writes of one task, as [`put_writes`](super::Checkpointer::put_writes) takes them,
/// carried by a [`ChainLink`].
#[derive(Debug, Clone, Default)]
pub struct WriteBatch {
    /// The writing task.
    pub task_id: String,
    /// The writing task's path.
    pub task_path: String,
    /// `(channel, value)` pairs in the order the task wrote them.
    pub writes: Vec<(String, ChannelValue)>,
}

/// One checkpoint of a [`Commit`], with the writes to save against its parent before it.
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

impl ChainLink {
    /// A link that carries no writes for its parent.
    pub fn new(checkpoint: Checkpoint, metadata: CheckpointMetadata, new_versions: ChannelVersions) -> Self {
        Self { writes: None, checkpoint, metadata, new_versions }
    }

    /// The same link, carrying `writes` to save against its parent first.
    #[must_use]
    pub fn with_writes(mut self, writes: WriteBatch) -> Self {
        self.writes = Some(writes);
        self
    }
}

/// What a [`Commit`] expects of its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectParent {
    /// Nothing: the parent may be any checkpoint, or none. Committing on an older checkpoint forks
    /// the thread, which is what time travel asks for.
    Any,
    /// The parent (`None`: no checkpoint at all) is still the latest checkpoint of the thread and
    /// namespace. Otherwise nothing is stored and the commit fails with
    /// [`CheckpointError::Conflict`](super::CheckpointError::Conflict). This keeps two workers
    /// that continue one thread at once from forking it.
    Latest,
}

/// Checkpoints to store at once, each the child of the one before, the first the child of
/// `parent`; each stored after the pending writes it carries, which belong to its parent.
///
/// The rows are those of [`put_writes`](super::Checkpointer::put_writes) and
/// [`put`](super::Checkpointer::put) called in turn for every link.
///
/// # Example
/// ```
/// use mnemograph_checkpoint::checkpoint::{
///     ChainLink, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource,
///     Checkpointer, Commit, ExpectParent, InMemoryCheckpointer,
/// };
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let saver = InMemoryCheckpointer::new();
/// let thread = CheckpointConfig::thread("t1");
/// let first = Checkpoint { id: "1".into(), ..Checkpoint::default() };
/// let link = ChainLink::new(first, CheckpointMetadata::new(CheckpointSource::Input, -1), Default::default());
/// let saved = saver.commit(Commit::new(thread.clone(), vec![link], ExpectParent::Latest)).await.unwrap();
/// assert_eq!(saved.checkpoint_id.as_deref(), Some("1"));
///
/// // Built on "no checkpoint" again, while "1" is now the latest: refused.
/// let second = Checkpoint { id: "2".into(), ..Checkpoint::default() };
/// let link = ChainLink::new(second, CheckpointMetadata::new(CheckpointSource::Loop, 0), Default::default());
/// let refused = saver.commit(Commit::new(thread, vec![link], ExpectParent::Latest)).await;
/// assert!(matches!(refused, Err(CheckpointError::Conflict { .. })));
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Commit {
    /// The address of the first link's parent (no `checkpoint_id`: the namespace has none).
    pub parent: CheckpointConfig,
    /// The checkpoints, oldest first; at least one.
    pub chain: Vec<ChainLink>,
    /// What the first link expects of `parent`. Every later link expects its parent, stored just
    /// before it, to be the latest.
    pub expect: ExpectParent,
}

impl Commit {
    /// A commit of `chain` on `parent`.
    pub fn new(parent: CheckpointConfig, chain: Vec<ChainLink>, expect: ExpectParent) -> Self {
        Self { parent, chain, expect }
    }

    /// LangGraph's `put` as a commit: one checkpoint on `parent`, whatever the parent is now. A
    /// saver whose `commit` is its one write path implements `put` as `commit(Commit::put(..))`.
    pub fn put(
        parent: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Self {
        let link = ChainLink::new(checkpoint, metadata, new_versions);
        Self::new(parent.clone(), vec![link], ExpectParent::Any)
    }

    /// The parent address of every link, in order, with the link.
    pub fn links(&self) -> impl Iterator<Item = (CheckpointConfig, &ChainLink)> {
        let mut parent = self.parent.clone();
        self.chain.iter().map(move |link| {
            let next = parent.clone().with_checkpoint_id(link.checkpoint.id.clone());
            (std::mem::replace(&mut parent, next), link)
        })
    }

    /// The address of the last link, where the thread stands once the commit is stored.
    pub fn last(&self) -> CheckpointConfig {
        match self.chain.last() {
            Some(link) => self.parent.clone().with_checkpoint_id(link.checkpoint.id.clone()),
            None => self.parent.clone(),
        }
    }
}
