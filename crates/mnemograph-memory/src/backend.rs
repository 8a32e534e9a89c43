//! For writing a [`Memory`](crate::Memory) backend: the steps every backend shares, so that a new
//! one ranks, scopes and retires exactly as the built-in ones do.
//!
//! A backend fetches candidates with a relevance in `[0, 1]` (dense, keyword, or fused with
//! [`weighted_rrf`](crate::weighted_rrf)), then hands them to [`finish`], which drops what the
//! query may not see, reranks with decay and importance and keeps the top k; a backend with the
//! embedding model calls [`NewerFirst::finish`](crate::NewerFirst::finish) instead, which also
//! ranks newer restatements above what they restate. Its retire and
//! restore run their read-modify-write under the per-user lock of a [`UserLocks`] and edit the
//! metadata with [`mark`] and [`unmark`]. Its `save` and `retrieve` run through [`traced_save`]
//! and [`traced_retrieve`], so every backend traces alike. Applications need none of
//! this.

pub use crate::memory::{finish, scored_ids};
pub use crate::record::validate_id;
pub use crate::retire::{is_retired, mark, unmark, UserGuard, UserLocks};
pub use crate::sessions::tally_sessions;
pub use crate::spans::{traced_retrieve, traced_save};
