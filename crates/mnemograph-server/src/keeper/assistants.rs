//! [`AssistantKeeper`]: where assistants and their versions are kept, behind one contract with
//! two keepers: `LocalAssistants` in this process, and a cluster's in its shared database.

use futures_util::future::BoxFuture;

use crate::assistant::AssistantRecord;
use crate::assistant_change::AssistantChange;
use crate::assistant_search::{AssistantSearch, VersionSearch};
use crate::auth::Grant;
use crate::error::Result;

/// Keeps assistants and every version of each. Every call is scoped by a [`Grant`]: an
/// assistant it does not reach is not found, exactly as one that does not exist.
///
/// Each registered graph's system assistant is stored as LangGraph's server stores it when it
/// starts: created unless an assistant with its id exists, so that the versions it was given
/// stay across restarts of a cluster's processes.
pub trait AssistantKeeper: Send + Sync {
    /// Stores `record` as version 1 of a new assistant. An existing id is a conflict (409),
    /// also when `grant` does not reach it; with `do_nothing` and a grant that reaches it, the
    /// existing assistant is returned as it is.
    fn create<'a>(
        &'a self,
        record: AssistantRecord,
        do_nothing: bool,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<AssistantRecord>>;

    /// The assistant `grant` reaches, at its latest version.
    fn get<'a>(&'a self, assistant_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<AssistantRecord>>;

    /// Makes `change` of the assistant's latest version its next version (one past the highest
    /// it has had), `grant`'s metadata stamped over it, and makes that version its latest.
    fn update<'a>(
        &'a self,
        assistant_id: &'a str,
        change: &'a AssistantChange,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<AssistantRecord>>;

    /// Deletes the assistant and all its versions.
    fn delete<'a>(&'a self, assistant_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<()>>;

    /// The assistants a search asks for (its grant's filter included), in its order and page,
    /// and whether more follow the page.
    fn search<'a>(&'a self, q: &'a AssistantSearch) -> BoxFuture<'a, Result<(Vec<AssistantRecord>, bool)>>;

    /// How many assistants a search finds, whatever its page.
    fn count<'a>(&'a self, q: &'a AssistantSearch) -> BoxFuture<'a, Result<usize>>;

    /// The versions of an assistant `grant` reaches, newest first, those whose metadata holds
    /// the search's filter and `grant`'s.
    fn versions<'a>(
        &'a self,
        assistant_id: &'a str,
        q: &'a VersionSearch,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<Vec<AssistantRecord>>>;

    /// Makes version `version` the assistant's latest: its graph, configuration, context,
    /// metadata, name and description become the assistant's.
    fn set_latest<'a>(
        &'a self,
        assistant_id: &'a str,
        version: i64,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<AssistantRecord>>;
}
