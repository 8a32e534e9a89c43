//! Opt-in delta storage for list channels (e.g. `messages`): per-version appended items plus
//! periodic full snapshots, instead of the whole list at every version.
//!
//! A plain saver (like LangGraph's) stores a channel's complete value at each new version, so a
//! conversation of N messages costs O(N²) bytes. For a delta channel, a value that extends the
//! value stored at an earlier version of the same channel (its items are that value's items plus
//! more, compared byte for byte) is stored as just the new items and a reference to that version,
//! under the `type` `delta-msgpack`; every `snapshot_every` versions, and whenever the list was
//! rewritten (trimmed, a message replaced or removed), the full value is stored as a plain
//! `msgpack` blob. Reads splice the chain back together: the value returned is byte for byte the
//! one a plain saver returns.
//!
//! See [`DeltaChannels`] for the settings and the compatibility notes.

mod cache;
mod format;
mod prune;
mod read;
mod settings;
mod write;

pub(crate) use cache::Stored;
pub(crate) use prune::prune_blobs;
pub(crate) use read::{resolve, Resolved};
pub use settings::DeltaChannels;
pub(crate) use settings::DeltaState;
pub(crate) use write::{insert, plan, Planned};
