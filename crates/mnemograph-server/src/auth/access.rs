//! What a caller asks to do ([`Access`]: a [`Resource`] and an [`Action`]) and what the server
//! lets it do ([`Grant`]).

use serde_json::{Map, Value};

use crate::filter;

/// The kinds of things the API serves, as LangGraph's auth handlers name them. Runs belong to
/// their thread: reading a run is reading its thread, starting one is
/// [`Action::CreateRun`] on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Resource {
    /// Threads, their state and history, and their runs.
    Threads,
    /// Assistants.
    Assistants,
    /// Scheduled runs.
    Crons,
    /// Store items and namespaces.
    Store,
}

/// What a request does to a [`Resource`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Action {
    /// Makes a new one (a thread, a copy of one, an assistant, a store item).
    Create,
    /// Reads one: a thread, its state, history or runs; a run's output or stream; an assistant
    /// or its versions; a store item.
    Read,
    /// Changes one: a thread's metadata or state; cancels a run; updates an assistant or sets one
    /// of its versions latest; puts a store item over another.
    Update,
    /// Deletes one (a thread, a run, an assistant, a store item).
    Delete,
    /// Lists, counts or searches them.
    Search,
    /// Starts a run on a thread (LangGraph's `threads.create_run`).
    CreateRun,
}

/// One request's ask, as [`Auth::authorize`](super::Auth::authorize) sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Access<'a> {
    /// What is asked for.
    pub resource: Resource,
    /// What is done to it.
    pub action: Action,
    /// The request's own words: the body of a create or search, `{"thread_id"}` of a read,
    /// `{"namespace", "key"}` of a store call.
    pub value: &'a Value,
}

/// What the server lets one request do: everything of the resource, or only what matches.
///
/// - **Metadata** ([`Grant::metadata`]): the request sees only the threads (and their runs) and
///   assistants whose metadata holds these keys and values, as if the others did not exist: a
///   read answers 404, a search leaves them out, a count does not count them. What the request
///   creates or updates gets these keys and values stamped into its metadata after the client's
///   own metadata, so a client can neither create a thing it cannot see nor give one away.
/// - **Namespace** ([`Grant::namespace`]): the request reaches only store items under this
///   namespace prefix. Reads and searches elsewhere find nothing; writes elsewhere are refused
///   with 403.
///
/// ```
/// use mnemograph_server::auth::Grant;
/// let mine = Grant::all().metadata("owner", "alice");
/// let notes = Grant::all().namespace(["alice"]);
/// # let _ = (mine, notes);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grant {
    metadata: Map<String, Value>,
    namespace: Vec<String>,
}

impl Grant {
    /// Everything of the resource.
    pub fn all() -> Self {
        Self::default()
    }

    /// Only the things whose metadata holds `key` with `value`; what the request creates or
    /// updates gets it stamped.
    #[must_use]
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// Only the store items under `prefix`.
    #[must_use]
    pub fn namespace<I: IntoIterator<Item = L>, L: Into<String>>(mut self, prefix: I) -> Self {
        self.namespace.extend(prefix.into_iter().map(Into::into));
        self
    }

    /// The metadata the things of this grant hold, empty for all.
    pub(crate) fn filter(&self) -> &Map<String, Value> {
        &self.metadata
    }

    /// Whether a thing with `metadata` is one this grant reaches.
    pub(crate) fn admits(&self, metadata: &Map<String, Value>) -> bool {
        filter::holds(metadata, &self.metadata)
    }

    /// Writes the grant's keys over `metadata`, after the client's own.
    pub(crate) fn stamp(&self, metadata: &mut Map<String, Value>) {
        metadata.extend(self.metadata.iter().map(|(k, v)| (k.clone(), v.clone())));
    }

    /// The store namespace prefix this grant confines to, empty for all.
    pub(crate) fn prefix(&self) -> &[String] {
        &self.namespace
    }

    /// Whether a store item under `namespace` is one this grant reaches.
    pub(crate) fn reaches(&self, namespace: &[String]) -> bool {
        namespace.starts_with(&self.namespace)
    }

    /// The prefix a store search or listing under `asked` searches within this grant: the
    /// longer of the two when one extends the other, `None` when they part (nothing is found).
    pub(crate) fn narrow(&self, asked: &[String]) -> Option<Vec<String>> {
        if asked.starts_with(&self.namespace) {
            Some(asked.to_vec())
        } else if self.namespace.starts_with(asked) {
            Some(self.namespace.clone())
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn labels(l: &[&str]) -> Vec<String> {
        l.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_stamp_overrides_what_the_client_wrote() {
        let grant = Grant::all().metadata("owner", "alice");
        let mut metadata = json!({"owner": "bob", "topic": "tea"}).as_object().cloned().unwrap_or_default();
        assert!(!grant.admits(&metadata));
        grant.stamp(&mut metadata);
        assert_eq!(Value::Object(metadata.clone()), json!({"owner": "alice", "topic": "tea"}));
        assert!(grant.admits(&metadata));
    }

    #[test]
    fn a_namespace_grant_narrows_searches_and_refuses_other_prefixes() {
        let grant = Grant::all().namespace(["alice"]);
        assert!(grant.reaches(&labels(&["alice", "notes"])));
        assert!(!grant.reaches(&labels(&["bob"])));
        assert!(!grant.reaches(&[]));
        assert_eq!(grant.narrow(&[]), Some(labels(&["alice"])));
        assert_eq!(grant.narrow(&labels(&["alice", "notes"])), Some(labels(&["alice", "notes"])));
        assert_eq!(grant.narrow(&labels(&["bob"])), None);
        assert_eq!(Grant::all().narrow(&labels(&["bob"])), Some(labels(&["bob"])));
    }
}
