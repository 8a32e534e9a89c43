//! What `threads` lists about each thread, whichever store holds it.

/// A thread and its latest checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    /// The thread id.
    pub thread_id: String,
    /// Checkpoints in all its namespaces.
    pub checkpoints: u64,
    /// Namespaces holding them: 1 for the root graph only, more with subgraphs.
    pub namespaces: u64,
    /// The id of its newest checkpoint.
    pub latest_id: String,
    /// The step of that checkpoint, when readable.
    pub latest_step: Option<i64>,
    /// Its creation time (ISO-8601), when readable.
    pub latest_ts: Option<String>,
}
