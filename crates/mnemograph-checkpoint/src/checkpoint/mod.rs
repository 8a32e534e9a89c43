//! Persistence: LangGraph's v4 checkpoint model and the [`Checkpointer`] trait.
//!
//! This crate holds no graph and no engine, so backends depend on it alone.
//!
//! A checkpoint is a snapshot of every channel after a superstep. Channel values are shared
//! [`ChannelValue`]s; a saver stores a value only for the channels listed in `new_versions`
//! (unchanged channels keep pointing at the value stored for their version).

pub mod backend;
mod channel_versions;
mod commit;
mod delegate;
pub(crate) mod error;
mod id;
mod in_memory;
mod prune;
mod read_cache;
mod redact;
pub(crate) mod saver;
pub mod serde;
mod spans;
pub mod stored;
mod time;
pub(crate) mod version;

use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) use backend::{next_version, write_index};
pub use channel_versions::{ChannelVersions, Iter as ChannelVersionsIter};
pub use commit::{ChainLink, Commit, ExpectParent, WriteBatch};
pub use error::CheckpointError;
pub use in_memory::InMemoryCheckpointer;
pub use prune::PruneStrategy;
pub use saver::{Checkpointer, DynCheckpointer};

pub(crate) use crate::value::{ChannelValue, ValueError};

/// Current checkpoint format version (LangGraph's `LATEST_VERSION`).
pub const CHECKPOINT_VERSION: u32 = 4;

/// Task id under which writes that come from the caller rather than a task are stored.
pub const NULL_TASK_ID: &str = "00000000-0000-0000-0000-000000000000";

/// Special pending-write channels and their fixed indexes (LangGraph's `WRITES_IDX_MAP`).
///
/// Writes to these channels are upserted; regular writes are insert-if-absent.
pub const WRITES_IDX_MAP: [(&str, i64); 4] =
    [("__error__", -1), ("__scheduled__", -2), ("__interrupt__", -3), ("__resume__", -4)];

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
    pub channel_values: BTreeMap<Arc<str>, ChannelValue>,
    /// Version of every channel that was ever written.
    pub channel_versions: ChannelVersions,
    /// Node → trigger channel → the version the node last saw. Special keys `__input__` and
    /// `__interrupt__`.
    pub versions_seen: BTreeMap<Arc<str>, ChannelVersions>,
    /// Channels updated by the step that produced this checkpoint, sorted.
    pub updated_channels: Option<Vec<Arc<str>>>,
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

    /// The metadata as LangGraph's JSON, as savers store it: the user keys (in
    /// `serde_json::Map`'s order), then `source`, `step` and `parents` (in place when a user key
    /// has the same name), in that order whatever serde_json's features. `.into_map()` gives a
    /// `serde_json::Map`.
    pub fn to_json(&self) -> serde::JsonObject {
        let mut json: serde::JsonObject = self.extra.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        json.insert("source", self.source.as_str().into());
        json.insert("step", self.step.into());
        let parents = self.parents.iter().map(|(k, v)| (k.clone(), v.as_str().into())).collect();
        json.insert("parents", serde_json::Value::Object(parents));
        json
    }

    /// Reads the metadata JSON LangGraph stores; unknown keys go to `extra`.
    ///
    /// # Errors
    /// [`SerdeError::Metadata`](serde::SerdeError::Metadata) when it is not an object, `source`
    /// or `step` is missing or malformed, or a parent is not a string.
    pub fn from_json(json: &serde_json::Value) -> Result<Self, serde::SerdeError> {
        let invalid = |what: &str| serde::SerdeError::Metadata(what.to_owned());
        let mut m = json.as_object().ok_or_else(|| invalid("not a JSON object"))?.clone();
        let source = m
            .remove("source")
            .and_then(|v| v.as_str().and_then(CheckpointSource::parse))
            .ok_or_else(|| invalid("missing or unknown `source`"))?;
        let step = m.remove("step").and_then(|v| v.as_i64()).ok_or_else(|| invalid("missing `step`"))?;
        let parents = match m.remove("parents") {
            Some(serde_json::Value::Object(p)) => p
                .into_iter()
                .map(|(k, v)| Ok((k, v.as_str().ok_or_else(|| invalid("non-string parent"))?.to_owned())))
                .collect::<Result<_, serde::SerdeError>>()?,
            _ => BTreeMap::new(),
        };
        Ok(Self { source, step, parents, extra: m })
    }

    /// Whether every key/value of `filter` is in this metadata (LangGraph's metadata filter).
    pub fn matches(&self, filter: &serde_json::Map<String, serde_json::Value>) -> bool {
        let json = self.to_json();
        filter.iter().all(|(k, v)| json.get(k) == Some(v))
    }

    /// The run that wrote the checkpoint: the `run_id` key, when it is a string.
    /// [`Checkpointer::delete_for_runs`] deletes checkpoints by it.
    pub fn run_id(&self) -> Option<&str> {
        self.extra.get("run_id").and_then(serde_json::Value::as_str)
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
