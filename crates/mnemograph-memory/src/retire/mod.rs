//! Retiring superseded memories: the [`Retire`] trait both backends implement, and the metadata
//! marks that make a retirement auditable.
//!
//! A retired memory is not deleted. It keeps its row, gains `superseded_by` (the id of the memory
//! that replaced it), `superseded_at` (seconds) and `superseded_reason` in its metadata, and
//! retrieval leaves it out unless [`RetrieveQuery::include_retired`](crate::RetrieveQuery::include_retired)
//! asks for it. So a wrong decision (an LLM's, say) can be inspected and undone with
//! [`Retire::restore`], which a deletion could not offer. Marks live in the existing JSON
//! `metadata` field: collections created before this feature need no migration.

mod embedded;
mod lock;
pub(crate) mod marks;

use std::future::Future;

use serde_json::{Map, Value};

use crate::error::Result;
use crate::memory::Memory;

pub use lock::{UserGuard, UserLocks};
pub use marks::is_retired;
pub use marks::{SUPERSEDED_AT, SUPERSEDED_BY, SUPERSEDED_REASON};

/// One memory to retire, and the audit trail it gets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retirement {
    /// The outdated memory.
    pub id: i64,
    /// The memory that replaces it.
    pub superseded_by: i64,
    /// When (seconds since the epoch).
    pub at: i64,
    /// Why, in the decider's words.
    pub reason: String,
}

impl Retirement {
    /// Retires `id` in favour of `superseded_by` at time `at`, for `reason`.
    pub fn new(id: i64, superseded_by: i64, at: i64, reason: impl Into<String>) -> Self {
        Self { id, superseded_by, at, reason: reason.into() }
    }
}

/// Marking memories as superseded, and undoing it. Implemented by
/// [`EmbeddedMemory`](crate::EmbeddedMemory) and mnemograph-memory-milvus's `MilvusMemory`; the
/// [`Consolidator`](crate::Consolidator) drives it.
///
/// A separate trait rather than more [`Memory`] methods, so existing `Memory` implementations
/// (wrappers that delegate to a backend) keep compiling and opt in when they can retire.
///
/// Like every [`Memory`] call, both methods are scoped to one user: ids of other users are skipped,
/// never touched.
///
/// # Concurrency
/// Both methods read a memory's metadata, edit it and write it back. What keeps two of them from
/// losing each other's marks:
///
/// - **Within one memory value and its clones** (one process): `retire`, `restore` and
///   [`Memory::delete`] hold a per-user async lock for their whole read-modify-write, so calls for
///   the same user run one after the other (other users are not blocked). Of two concurrent
///   retirements of the same memory exactly one is reported and its audit trail stays; a restore
///   and a retirement end as if they had run in some order, each reporting what it did in that
///   order. The lock map only holds users with a call in flight.
/// - **Across processes, or across memory values constructed separately** (two `connect`s, two
///   `EmbeddedMemory::with_store` over one shared store): nothing serializes them. Milvus has no
///   transactions and no conditional write, so two such calls on the same memory can both read
///   it unretired and both report it retired; the upsert that lands last decides which trail the
///   memory keeps, and a restore racing a retirement may likewise be undone. Run consolidation of
///   a user from one process (or one shared value) when the audit trail must be exact. What does
///   hold across processes: a write replaces the whole `metadata` value of one row, so a memory
///   never carries some marks without the others, and Milvus's id, vectors and other fields are
///   never rewritten.
pub trait Retire: Memory {
    /// Marks memories of `user_id` as superseded. Ids that are unknown, another user's, or already
    /// retired are skipped (an existing audit trail is never overwritten). Returns the ids marked.
    ///
    /// # Errors
    /// An invalid user id; backend failures;
    /// [`Error::Unsupported`](crate::Error::Unsupported) on Milvus older than 2.6.2 (no partial
    /// upsert), with nothing written.
    fn retire(
        &self,
        user_id: &str,
        retirements: &[Retirement],
    ) -> impl Future<Output = Result<Vec<i64>>> + Send;

    /// Removes the marks of retired memories of `user_id`, so retrieval returns them again.
    /// Returns the ids restored (those that were retired).
    ///
    /// # Errors
    /// As [`retire`](Self::retire).
    fn restore(&self, user_id: &str, ids: &[i64]) -> impl Future<Output = Result<Vec<i64>>> + Send;
}

/// Adds the marks of `r` to `metadata`, unless it is already retired; returns whether it changed.
pub fn mark(metadata: &mut Map<String, Value>, r: &Retirement) -> bool {
    if is_retired(metadata) {
        return false;
    }
    metadata.insert(SUPERSEDED_BY.into(), r.superseded_by.into());
    metadata.insert(SUPERSEDED_AT.into(), r.at.into());
    metadata.insert(SUPERSEDED_REASON.into(), r.reason.clone().into());
    true
}

/// Removes the marks; returns whether there were any.
pub fn unmark(metadata: &mut Map<String, Value>) -> bool {
    let was = is_retired(metadata);
    for key in [SUPERSEDED_BY, SUPERSEDED_AT, SUPERSEDED_REASON] {
        metadata.remove(key);
    }
    was
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_written_once_and_removed_together() {
        let mut m = Map::new();
        m.insert("type".into(), "dialogue_turn".into());
        assert!(mark(&mut m, &Retirement::new(1, 2, 100, "moved")));
        assert!(is_retired(&m));
        assert_eq!(m[SUPERSEDED_BY], 2);
        // A second decision does not overwrite the first audit trail.
        assert!(!mark(&mut m, &Retirement::new(1, 3, 200, "other")));
        assert_eq!(m[SUPERSEDED_BY], 2);
        assert!(unmark(&mut m));
        assert!(!unmark(&mut m));
        assert_eq!(m.len(), 1, "the memory's own metadata is kept");
    }
}
