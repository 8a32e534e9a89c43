//! The data a [`Store`](super::Store) keeps and the options of its queries.

use std::ops::Deref;
use std::time::SystemTime;

use serde_json::{Map, Value};

/// A stored document (LangGraph's `Item`).
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The namespace it lives in, e.g. `["memories", "user-42"]`.
    pub namespace: Vec<String>,
    /// Its key within the namespace.
    pub key: String,
    /// The document: always a JSON object.
    pub value: Value,
    /// When the key was first written.
    pub created_at: SystemTime,
    /// When the value was last replaced.
    pub updated_at: SystemTime,
}

/// An [`Item`] returned by [`Store::search`](super::Store::search), with its relevance.
///
/// Dereferences to the item, so `hit.key` and `hit.value` read as on an [`Item`].
#[derive(Debug, Clone, PartialEq)]
pub struct SearchItem {
    /// The item.
    pub item: Item,
    /// Similarity to the query (cosine for [`InMemoryStore`](super::InMemoryStore); higher is more
    /// relevant); `None` when the search had no query or the store has no index.
    pub score: Option<f64>,
}

impl Deref for SearchItem {
    type Target = Item;
    fn deref(&self) -> &Item {
        &self.item
    }
}

/// What [`Store::search`](super::Store::search) looks for: LangGraph's `query`, `filter`, `limit`
/// and `offset` arguments.
///
/// ```
/// use mnemograph_checkpoint::store::SearchQuery;
/// use serde_json::json;
///
/// let q = SearchQuery::new().query("coffee").filter(json!({"stars": {"$gte": 4}})).limit(5);
/// assert_eq!(q.limit, 5);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SearchQuery {
    /// Natural-language query for semantic ranking; ignored by stores without an index.
    pub query: Option<String>,
    /// Field conditions every result must meet (see [`matches_filter`](super::matches_filter)).
    pub filter: Option<Map<String, Value>>,
    /// At most this many results (LangGraph's default: 10).
    pub limit: usize,
    /// Skip this many results first, for paging.
    pub offset: usize,
}

impl Default for SearchQuery {
    fn default() -> Self {
        Self { query: None, filter: None, limit: 10, offset: 0 }
    }
}

impl SearchQuery {
    /// No query, no filter, limit 10, offset 0.
    pub fn new() -> Self {
        Self::default()
    }
    /// Ranks by similarity to `query`.
    #[must_use]
    pub fn query(mut self, query: impl Into<String>) -> Self {
        self.query = Some(query.into());
        self
    }
    /// Keeps only items matching `filter`, a JSON object (any other JSON value means no filter).
    #[must_use]
    pub fn filter(mut self, filter: Value) -> Self {
        self.filter = match filter {
            Value::Object(m) => Some(m),
            _ => None,
        };
        self
    }
    /// Returns at most `limit` items.
    #[must_use]
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
    /// Skips the first `offset` items.
    #[must_use]
    pub fn offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }
}

/// A namespace condition of [`ListNamespaces`]; `"*"` labels match any single label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceMatch {
    /// The namespace starts with these labels.
    Prefix(Vec<String>),
    /// The namespace ends with these labels.
    Suffix(Vec<String>),
}

impl NamespaceMatch {
    /// Whether `namespace` meets the condition.
    pub fn matches(&self, namespace: &[String]) -> bool {
        let (pattern, window) = match self {
            Self::Prefix(p) if p.len() <= namespace.len() => (p, &namespace[..p.len()]),
            Self::Suffix(p) if p.len() <= namespace.len() => (p, &namespace[namespace.len() - p.len()..]),
            _ => return false,
        };
        pattern.iter().zip(window).all(|(p, label)| p == "*" || p == label)
    }
}

/// Options of [`Store::list_namespaces`](super::Store::list_namespaces) (LangGraph's `prefix`,
/// `suffix`, `max_depth`, `limit=100`, `offset=0`).
///
/// ```
/// use mnemograph_checkpoint::store::ListNamespaces;
///
/// let opts = ListNamespaces::new().prefix(["memories"]).max_depth(2);
/// assert_eq!(opts.limit, 100);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListNamespaces {
    /// Conditions every listed namespace meets.
    pub conditions: Vec<NamespaceMatch>,
    /// Namespaces deeper than this are truncated to it (and then deduplicated).
    pub max_depth: Option<usize>,
    /// At most this many namespaces.
    pub limit: usize,
    /// Skip this many first.
    pub offset: usize,
}

impl Default for ListNamespaces {
    fn default() -> Self {
        Self { conditions: Vec::new(), max_depth: None, limit: 100, offset: 0 }
    }
}

impl ListNamespaces {
    /// Every namespace, limit 100.
    pub fn new() -> Self {
        Self::default()
    }
    /// Only namespaces starting with `prefix` (`"*"` matches any label).
    #[must_use]
    pub fn prefix<I: IntoIterator<Item = S>, S: Into<String>>(mut self, prefix: I) -> Self {
        self.conditions.push(NamespaceMatch::Prefix(prefix.into_iter().map(Into::into).collect()));
        self
    }
    /// Only namespaces ending with `suffix` (`"*"` matches any label).
    #[must_use]
    pub fn suffix<I: IntoIterator<Item = S>, S: Into<String>>(mut self, suffix: I) -> Self {
        self.conditions.push(NamespaceMatch::Suffix(suffix.into_iter().map(Into::into).collect()));
        self
    }
    /// Truncates namespaces to `depth` labels.
    #[must_use]
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.max_depth = Some(depth);
        self
    }
    /// Returns at most `limit` namespaces.
    #[must_use]
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }
    /// Skips the first `offset` namespaces.
    #[must_use]
    pub fn offset(mut self, offset: usize) -> Self {
        self.offset = offset;
        self
    }

    /// Applies the options to every namespace that holds an item: match, truncate, deduplicate,
    /// sort, page. Backends that can enumerate their namespaces use this to share the semantics.
    pub fn apply<'a>(&self, namespaces: impl IntoIterator<Item = &'a [String]>) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = namespaces
            .into_iter()
            .filter(|ns| self.conditions.iter().all(|c| c.matches(ns)))
            .map(|ns| ns[..self.max_depth.map_or(ns.len(), |d| d.min(ns.len()))].to_vec())
            .collect();
        out.sort();
        out.dedup();
        out.into_iter().skip(self.offset).take(self.limit).collect()
    }
}
