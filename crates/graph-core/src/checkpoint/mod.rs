//! Persistence: LangGraph's v4 checkpoint model and the [`Checkpointer`] trait.
//!
//! This module imports nothing from the graph or the engine, so backends depend only on it.
//!
//! A checkpoint is a snapshot of every channel after a superstep. Channel values are shared
//! [`ChannelValue`]s; a saver stores a value only for the channels listed in `new_versions`
//! (unchanged channels keep pointing at the value stored for their version).

mod id;
mod memory;
pub mod serde;
mod time;
mod version;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

pub use id::{checkpoint_id, uuid6};
pub use memory::InMemoryCheckpointer;
pub use time::{format_iso, now_iso};
pub use version::{next_version, version_number};

pub use crate::value::{ChannelValue, Encoded, ValueError};

/// Current checkpoint format version (LangGraph's `LATEST_VERSION`).
pub const CHECKPOINT_VERSION: u32 = 4;

/// Task id under which writes that come from the caller rather than a task are stored.
pub const NULL_TASK_ID: &str = "00000000-0000-0000-0000-000000000000";

/// Special pending-write channels and their fixed indexes (LangGraph's `WRITES_IDX_MAP`).
///
/// Writes to these channels are upserted; regular writes are insert-if-absent.
pub const WRITES_IDX_MAP: [(&str, i64); 4] =
    [("__error__", -1), ("__scheduled__", -2), ("__interrupt__", -3), ("__resume__", -4)];

/// The index a pending write is stored under: its position, or the fixed index of a special channel.
pub fn write_index(channel: &str, position: usize) -> i64 {
    WRITES_IDX_MAP.iter().find(|(c, _)| *c == channel).map_or(position as i64, |(_, i)| *i)
}

/// Channel name → version string.
pub type ChannelVersions = BTreeMap<String, String>;

/// Addresses a thread, a namespace within it, and optionally one checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct CheckpointConfig {
    /// The conversation/thread.
    pub thread_id: String,
    /// `""` for the root graph, `"node:<task_id>"` (joined by `|`) for subgraphs.
    pub checkpoint_ns: String,
    /// A specific checkpoint; `None` means the latest.
    pub checkpoint_id: Option<String>,
}

impl CheckpointConfig {
    /// The latest checkpoint of a thread's root namespace.
    pub fn thread(thread_id: impl Into<String>) -> Self {
        Self { thread_id: thread_id.into(), ..Self::default() }
    }
    /// The same address with another namespace.
    #[must_use]
    pub fn with_ns(mut self, checkpoint_ns: impl Into<String>) -> Self {
        self.checkpoint_ns = checkpoint_ns.into();
        self
    }
    /// The same address pinned to one checkpoint.
    #[must_use]
    pub fn with_checkpoint_id(mut self, checkpoint_id: impl Into<String>) -> Self {
        self.checkpoint_id = Some(checkpoint_id.into());
        self
    }
}

/// LangGraph's `Checkpoint` (format v4).
#[derive(Debug, Clone, Default)]
pub struct Checkpoint {
    /// Format version, [`CHECKPOINT_VERSION`].
    pub v: u32,
    /// A uuid6 whose string order is creation order and whose clock sequence is the step.
    pub id: String,
    /// ISO-8601 creation time in UTC, e.g. `2026-11-30T04:52:35.819352+00:00`.
    pub ts: String,
    /// Values of the channels that have one.
    pub channel_values: BTreeMap<String, ChannelValue>,
    /// Version of every channel that was ever written.
    pub channel_versions: ChannelVersions,
    /// Node → trigger channel → the version the node last saw. Special keys `__input__` and
    /// `__interrupt__`.
    pub versions_seen: BTreeMap<String, ChannelVersions>,
    /// Channels updated by the step that produced this checkpoint, sorted.
    pub updated_channels: Option<Vec<String>>,
}

/// Why a checkpoint was written (`metadata.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CheckpointSource {
    /// The input of a run (step -1).
    Input,
    /// Written by the superstep loop.
    Loop,
    /// Written by `update_state`.
    Update,
    /// A copy made when a run is replayed from an older checkpoint.
    Fork,
}

impl CheckpointSource {
    /// LangGraph's name for it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Input => "input",
            Self::Loop => "loop",
            Self::Update => "update",
            Self::Fork => "fork",
        }
    }
    /// Parses LangGraph's name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "input" => Self::Input,
            "loop" => Self::Loop,
            "update" => Self::Update,
            "fork" => Self::Fork,
            _ => return None,
        })
    }
}

/// LangGraph's `CheckpointMetadata`: `source`, `step`, `parents`, plus user keys.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointMetadata {
    /// Why the checkpoint was written.
    pub source: CheckpointSource,
    /// The step: -1 for the input, then 0, 1, ...
    pub step: i64,
    /// Namespace → checkpoint id of each enclosing graph (`{}` at the root).
    pub parents: BTreeMap<String, String>,
    /// Every other key (user metadata such as `run_id`), kept verbatim.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl CheckpointMetadata {
    /// Metadata with no parents and no extra keys.
    pub fn new(source: CheckpointSource, step: i64) -> Self {
        Self { source, step, parents: BTreeMap::new(), extra: serde_json::Map::new() }
    }

    /// The metadata as the JSON object LangGraph stores.
    pub fn to_json(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = self.extra.clone();
        m.insert("source".into(), self.source.as_str().into());
        m.insert("step".into(), self.step.into());
        let parents = self.parents.iter().map(|(k, v)| (k.clone(), v.clone().into())).collect();
        m.insert("parents".into(), serde_json::Value::Object(parents));
        m
    }

    /// Reads the JSON object LangGraph stores; unknown keys go to `extra`.
    ///
    /// # Errors
    /// [`CheckpointError::Corrupt`] when `source` or `step` is missing or malformed.
    pub fn from_json(mut m: serde_json::Map<String, serde_json::Value>) -> Result<Self, CheckpointError> {
        let corrupt = |what: &str| CheckpointError::Corrupt(format!("metadata: {what}"));
        let source = m
            .remove("source")
            .and_then(|v| v.as_str().and_then(CheckpointSource::parse))
            .ok_or_else(|| corrupt("missing or unknown `source`"))?;
        let step = m.remove("step").and_then(|v| v.as_i64()).ok_or_else(|| corrupt("missing `step`"))?;
        let parents = match m.remove("parents") {
            Some(serde_json::Value::Object(p)) => p
                .into_iter()
                .map(|(k, v)| Ok((k, v.as_str().ok_or_else(|| corrupt("non-string parent"))?.to_owned())))
                .collect::<Result<_, CheckpointError>>()?,
            _ => BTreeMap::new(),
        };
        Ok(Self { source, step, parents, extra: m })
    }

    /// Whether every key/value of `filter` is in this metadata (LangGraph's metadata filter).
    pub fn matches(&self, filter: &serde_json::Map<String, serde_json::Value>) -> bool {
        let json = self.to_json();
        filter.iter().all(|(k, v)| json.get(k) == Some(v))
    }
}

/// One pending write: a value a task wrote to a channel against a checkpoint that is not yet
/// superseded.
#[derive(Debug, Clone)]
pub struct PendingWrite {
    /// The task that wrote it (or [`NULL_TASK_ID`]).
    pub task_id: String,
    /// The channel.
    pub channel: String,
    /// The value.
    pub value: ChannelValue,
}

/// LangGraph's `CheckpointTuple`.
#[derive(Debug, Clone)]
pub struct CheckpointTuple {
    /// The address of this checkpoint (with its id).
    pub config: CheckpointConfig,
    /// The checkpoint.
    pub checkpoint: Checkpoint,
    /// Its metadata.
    pub metadata: CheckpointMetadata,
    /// The checkpoint it was derived from.
    pub parent_config: Option<CheckpointConfig>,
    /// Writes saved against it, ordered by `(task_id, idx)`.
    pub pending_writes: Vec<PendingWrite>,
}

/// Options of [`Checkpointer::list`].
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ListOptions {
    /// Only checkpoints whose metadata contains every key/value here.
    pub filter: Option<serde_json::Map<String, serde_json::Value>>,
    /// Only checkpoints with an id smaller than this one.
    pub before: Option<String>,
    /// At most this many.
    pub limit: Option<usize>,
}

impl ListOptions {
    /// No filter, no bound, no limit.
    pub fn new() -> Self {
        Self::default()
    }
    /// Keeps only checkpoints whose metadata contains `filter`.
    #[must_use]
    pub fn filter(mut self, filter: serde_json::Map<String, serde_json::Value>) -> Self {
        self.filter = Some(filter);
        self
    }
    /// Keeps only checkpoints older than `checkpoint_id`.
    #[must_use]
    pub fn before(mut self, checkpoint_id: impl Into<String>) -> Self {
        self.before = Some(checkpoint_id.into());
        self
    }
    /// Returns at most `limit` checkpoints.
    #[must_use]
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }
}

/// A boxed error from a backend.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A failure of a checkpointer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointError {
    /// The backend failed (connection, query, ...). Downcast the source for details.
    #[error("checkpoint backend error")]
    Backend(#[source] BoxError),
    /// A stored value could not be decoded.
    #[error("cannot decode channel `{channel}` of checkpoint {checkpoint_id} in thread `{thread_id}`")]
    Decode {
        /// The thread.
        thread_id: String,
        /// The checkpoint.
        checkpoint_id: String,
        /// The channel or pending-write channel.
        channel: String,
        /// Why.
        #[source]
        source: ValueError,
    },
    /// A stored record is malformed.
    #[error("corrupt checkpoint record: {0}")]
    Corrupt(String),
    /// The request itself is invalid (e.g. an id longer than the store accepts).
    #[error("invalid checkpoint request: {0}")]
    Invalid(String),
    /// [`Checkpointer::put_expecting_latest`] found that the latest checkpoint of the thread and
    /// namespace is no longer the parent the caller built on: another writer committed first.
    /// Nothing was saved. Re-read the thread and try again, or report it.
    #[error(
        "checkpoint conflict in thread `{thread_id}` namespace `{checkpoint_ns}`: expected latest {}, found {}",
        DisplayId(.expected.as_deref()),
        DisplayId(.found.as_deref())
    )]
    Conflict {
        /// The thread.
        thread_id: String,
        /// The namespace.
        checkpoint_ns: String,
        /// The parent the new checkpoint was built on (`None`: the namespace was empty).
        expected: Option<String>,
        /// The latest checkpoint actually stored (`None`: the namespace is empty).
        found: Option<String>,
    },
}

impl CheckpointError {
    /// A [`Conflict`](Self::Conflict) at `config` (whose `checkpoint_id` is the expected parent).
    pub fn conflict(config: &CheckpointConfig, found: Option<String>) -> Self {
        Self::Conflict {
            thread_id: config.thread_id.clone(),
            checkpoint_ns: config.checkpoint_ns.clone(),
            expected: config.checkpoint_id.clone(),
            found,
        }
    }

    /// Whether this is a [`Conflict`](Self::Conflict).
    pub fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict { .. })
    }
}

/// A checkpoint id in an error message, or `none`.
struct DisplayId<'a>(Option<&'a str>);

impl std::fmt::Display for DisplayId<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(id) => write!(f, "`{id}`"),
            None => f.write_str("none"),
        }
    }
}

/// A future returned by [`DynCheckpointer`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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
    /// the special channels of [`WRITES_IDX_MAP`] are upserted.
    fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> impl Future<Output = Result<(), CheckpointError>> + Send;

    /// Deletes every checkpoint, blob and write of a thread, in all namespaces.
    fn delete_thread(&self, thread_id: &str) -> impl Future<Output = Result<(), CheckpointError>> + Send;

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
    /// See [`Checkpointer::delete_thread`].
    fn delete_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>>;
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
    fn delete_thread<'a>(&'a self, thread_id: &'a str) -> BoxFuture<'a, Result<(), CheckpointError>> {
        Box::pin(Checkpointer::delete_thread(self, thread_id))
    }
    fn get_next_version(&self, current: Option<&str>) -> String {
        Checkpointer::get_next_version(self, current)
    }
}
