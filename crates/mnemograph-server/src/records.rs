//! The server's bookkeeping of threads and runs, as the API shows them (`Thread`, `Run`).

use std::collections::VecDeque;

use serde_json::{json, Map, Value};
use uuid::Uuid;

use crate::filter::holds;

/// Now, in the API's timestamp format.
pub fn now() -> String {
    mnemograph_core::checkpoint::backend::now_iso()
}

/// The timestamp `ago` before now, in the API's format. Such timestamps are fixed-width UTC, so
/// comparing their text compares their times.
pub fn stamp_before(ago: std::time::Duration) -> String {
    let at = std::time::SystemTime::now().checked_sub(ago).unwrap_or(std::time::UNIX_EPOCH);
    let d = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    mnemograph_core::checkpoint::backend::format_iso(d.as_secs() as i64, d.subsec_micros())
}

/// The timestamp `later` after now, in the API's format: a delayed run's `created_at`, as
/// LangGraph's server dates it.
pub fn stamp_after(later: std::time::Duration) -> String {
    let at = std::time::SystemTime::now() + later;
    let d = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    mnemograph_core::checkpoint::backend::format_iso(d.as_secs() as i64, d.subsec_micros())
}

/// A thread's record: what `GET /threads/{id}` answers, plus its run queue.
#[derive(Debug, Clone)]
pub struct ThreadRecord {
    /// The thread's id.
    pub thread_id: String,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
    /// Its metadata, which searches and grants match.
    pub metadata: Map<String, Value>,
    /// `idle`, `busy`, `interrupted` or `error`.
    pub status: &'static str,
    /// The state after the last run (`null` before the first).
    pub values: Value,
    /// Task id → the interrupts it waits on.
    pub interrupts: Map<String, Value>,
    /// The last run's error, when it failed.
    pub error: Value,
    /// The run in progress.
    pub(crate) active: Option<String>,
    /// Runs waiting for the thread, oldest first (`multitask_strategy = "enqueue"`).
    pub(crate) queue: VecDeque<String>,
}

impl ThreadRecord {
    /// A new idle thread with `metadata`, created now.
    pub fn new(thread_id: String, metadata: Map<String, Value>) -> Self {
        let at = now();
        Self {
            thread_id,
            created_at: at.clone(),
            updated_at: at,
            metadata,
            status: "idle",
            values: Value::Null,
            interrupts: Map::new(),
            error: Value::Null,
            active: None,
            queue: VecDeque::new(),
        }
    }

    /// The record with no run in progress or waiting, idle: what is left of a thread whose runs
    /// were all stopped and dropped.
    pub fn without_runs(mut self) -> Self {
        self.status = "idle";
        self.active = None;
        self.queue.clear();
        self
    }

    /// Whether a run is in progress or waiting.
    pub(crate) fn is_busy(&self) -> bool {
        self.active.is_some() || !self.queue.is_empty()
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({
            "thread_id": self.thread_id,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "state_updated_at": self.updated_at,
            "metadata": self.metadata,
            "status": self.status,
            "config": { "configurable": {} },
            "values": self.values,
            "error": self.error,
            "interrupts": self.interrupts,
        })
    }
}

/// A run's record: what `GET /threads/{id}/runs/{run_id}` answers.
#[derive(Debug, Clone)]
pub struct RunRecord {
    /// The run's id.
    pub run_id: String,
    /// The thread it runs on.
    pub thread_id: String,
    /// The assistant it runs as.
    pub assistant_id: String,
    /// Its metadata.
    pub metadata: Map<String, Value>,
    /// `pending`, `running`, `success`, `error`, `interrupted` or `timeout`.
    pub status: &'static str,
    /// The request that created it.
    pub kwargs: Value,
    /// How it was handled on a busy thread.
    pub multitask_strategy: String,
    /// When it was created, or is due when delayed (RFC 3339).
    pub created_at: String,
    /// When its status last changed (RFC 3339).
    pub updated_at: String,
}

impl RunRecord {
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "run_id": self.run_id,
            "thread_id": self.thread_id,
            "assistant_id": self.assistant_id,
            "metadata": self.metadata,
            "status": self.status,
            "kwargs": self.kwargs,
            "multitask_strategy": self.multitask_strategy,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            // No LangSmith tracing here, so no session to name.
            "langsmith_session_name": null,
        })
    }

    /// Whether the run has finished, one way or another.
    pub fn is_finished(&self) -> bool {
        !matches!(self.status, "pending" | "running")
    }
}

/// `POST /threads/search` and `/threads/count`: which threads, and which page of them, newest
/// first.
#[derive(Debug, Default, Clone, serde::Deserialize)]
#[serde(default)]
pub struct ThreadSearch {
    /// Keys and values a thread's metadata must hold.
    pub metadata: Option<Map<String, Value>>,
    /// Keys and values a thread's state must hold.
    pub values: Option<Map<String, Value>>,
    /// Only the threads of this status.
    pub status: Option<String>,
    /// Only the threads of these ids.
    pub ids: Option<Vec<String>>,
    pub(crate) limit: Option<usize>,
    pub(crate) offset: Option<usize>,
    /// The metadata the caller's grant confines it to; never read from the request.
    #[serde(skip)]
    pub within: Map<String, Value>,
}

impl ThreadSearch {
    /// Confines the search to what `grant` reaches.
    pub(crate) fn within(mut self, grant: &crate::auth::Grant) -> Self {
        self.within = grant.filter().clone();
        self
    }

    /// Whether `thread` is one the search asks for.
    pub(crate) fn keeps(&self, thread: &ThreadRecord) -> bool {
        let empty = Map::new();
        let values = thread.values.as_object().unwrap_or(&empty);
        holds(&thread.metadata, &self.within)
            && self.metadata.as_ref().is_none_or(|f| holds(&thread.metadata, f))
            && self.values.as_ref().is_none_or(|f| holds(values, f))
            && self.status.as_deref().is_none_or(|s| s == thread.status)
            && self.ids.as_ref().is_none_or(|ids| ids.contains(&thread.thread_id))
    }

    /// How many to show (10 by default) and how many to skip.
    pub fn page(&self) -> (usize, usize) {
        (self.limit.unwrap_or(10), self.offset.unwrap_or(0))
    }
}

/// The id of a new thread: the one asked for, which must be a UUID, or a fresh one.
pub fn new_thread_id(asked: Option<String>) -> crate::error::Result<String> {
    match asked {
        Some(id) => {
            Uuid::parse_str(&id)
                .map_err(|e| crate::error::ServerError::BadRequest(format!("invalid thread_id: {e}")))?;
            Ok(id)
        }
        None => Ok(Uuid::now_v7().to_string()),
    }
}
