//! The metadata keys that mark a memory as retired, and the check for them.
//!
//! A leaf: records read the marks to answer [`MemoryRecord::is_retired`](crate::MemoryRecord::is_retired),
//! and the retirement code writes them, so neither needs the other to know what a mark is.

use serde_json::{Map, Value};

/// Metadata key: id of the memory that superseded this one.
pub const SUPERSEDED_BY: &str = "superseded_by";
/// Metadata key: when it was retired (seconds since the epoch).
pub const SUPERSEDED_AT: &str = "superseded_at";
/// Metadata key: why (the decider's reason).
pub const SUPERSEDED_REASON: &str = "superseded_reason";

/// Whether metadata carries a retirement mark.
pub fn is_retired(metadata: &Map<String, Value>) -> bool {
    metadata.contains_key(SUPERSEDED_BY)
}
