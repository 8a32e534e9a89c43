//! What mnemograph-core's engine and this project's savers need of this crate beyond the saver
//! contract: the engine's own channel encodings as Python's serializer writes them, version texts
//! rendered into the engine's buffers, JSON text as Python's `json.dumps` writes it, and a few
//! checks. Public so those crates can reach it, hidden from the docs, and free to change between
//! releases: nothing else should use it.

use std::sync::Arc;

pub use crate::checkpoint::serde::ext::{langgraph_dataclass, ExtRef, EXT_CONSTRUCTOR_KW_ARGS};
pub use crate::checkpoint::serde::trees::{fields_tree, send_value, set_value, tree_value};
pub use crate::checkpoint::version::{write_version_text, VERSION_TEXT_LEN};
use crate::checkpoint::ChannelVersions;

/// JSON text as Python's `json.dumps` writes it, for the savers whose columns hold what
/// LangGraph's Python savers write with it.
pub mod python_json {
    pub use crate::checkpoint::serde::python_json::dumps;
}

/// Whether a pending write records what happened to its task (its error, interrupt or answers)
/// rather than what it produced: LangGraph counts a task as finished once it wrote anything else.
pub fn is_control_write(channel: &str) -> bool {
    channel == "__error_source_node__" || crate::checkpoint::WRITES_IDX_MAP.iter().any(|(c, _)| *c == channel)
}

/// Channel versions from entries already sorted by channel with no channel twice, as the engine
/// builds them (see `ChannelVersions::from_sorted`).
pub fn channel_versions_from_sorted<I>(entries: I) -> ChannelVersions
where
    I: IntoIterator<Item = (Arc<str>, Arc<str>)>,
    I::IntoIter: ExactSizeIterator,
{
    ChannelVersions::from_sorted(entries)
}
