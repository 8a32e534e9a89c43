//! What a saver's author needs beyond the [`Checkpointer`](super::Checkpointer) contract: ids,
//! timestamps and versions as LangGraph writes them, the index a pending write is stored under,
//! connection URLs safe to print ([`redact`]), and the [`ReadCache`] layer that keeps the
//! checkpoints a saver wrote last. Building and running graphs needs none of it.

pub use super::delegate::Delegate;
pub use super::id::{checkpoint_id, uuid6};
pub use super::read_cache::{Fingerprinted, ReadCache, DEFAULT_RECENT_CAPACITY};
pub use super::redact::redact;
pub use super::spans::record_io;
pub use super::time::{civil_from_days, days_from_civil, format_iso, now_iso};
pub use super::version::{next_version, version_number};
use super::WRITES_IDX_MAP;

/// The index a pending write is stored under: its position, or the fixed index of a special channel.
pub fn write_index(channel: &str, position: usize) -> i64 {
    WRITES_IDX_MAP.iter().find(|(c, _)| *c == channel).map_or(position as i64, |(_, i)| *i)
}
