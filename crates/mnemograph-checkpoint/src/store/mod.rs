//! Long-term memory: LangGraph's `BaseStore` as the [`Store`] trait, plus [`InMemoryStore`].
//!
//! A store keeps JSON documents ([`Item`]s) under hierarchical **namespaces** (tuples of labels such
//! as `["memories", "user-42"]`) and keys. Unlike a checkpoint, which belongs to one thread, a store
//! is shared by every thread of an application, so it is where facts about a user outlive a
//! conversation. [`Store::search`] filters by namespace prefix and by field values and, when the
//! store has an [`Embeddings`] model, ranks by semantic similarity to a query.
//!
//! Like [`checkpoint`](crate::checkpoint), it lives apart from the graph engine, so backends
//! (`mnemograph-memory-milvus`, ...) depend on this crate alone.
//!
//! ```
//! use mnemograph_checkpoint::store::{namespace, HashingEmbeddings, IndexConfig, InMemoryStore, SearchQuery, Store};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), mnemograph_checkpoint::store::StoreError> {
//! // HashingEmbeddings is a deterministic stand-in for tests; use a real model in applications.
//! let store = InMemoryStore::with_index(IndexConfig::new(HashingEmbeddings::new(256)));
//! let ns = namespace(["memories", "user-42"]);
//! store.put(&ns, "pref", json!({"text": "prefers dark roast coffee", "kind": "preference"}), None).await?;
//! store.put(&ns, "pet", json!({"text": "has a cat named Miso", "kind": "fact"}), None).await?;
//!
//! let hits = store.search(&ns, SearchQuery::new().query("what coffee do they like").limit(1)).await?;
//! assert_eq!(hits[0].key, "pref");
//!
//! let facts = store.search(&ns, SearchQuery::new().filter(json!({"kind": "fact"}))).await?;
//! assert_eq!(facts.len(), 1);
//! # Ok(()) }
//! ```

mod embed;
mod filter;
mod in_memory;
mod item;
mod namespace;
mod row;
mod rules;
mod sweep;

use std::future::Future;
use std::time::Duration;

pub use embed::{cosine_similarity, tokenize, DynEmbeddings, Embeddings, HashingEmbeddings};
pub use filter::{matches_filter, validate_filter};
pub use in_memory::{InMemoryStore, IndexConfig, TtlConfig};
pub use item::{Item, ListNamespaces, NamespaceMatch, SearchItem, SearchQuery};
pub use namespace::{namespace, validate_namespace};
pub use row::{item_from_row, CorruptRow};
pub use rules::{texts_to_embed, validate_put};
pub use sweep::SweepSchedule;

use crate::checkpoint::saver::BoxFuture;
use crate::BoxError;

/// A failure of a [`Store`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A namespace breaks LangGraph's rules (empty, an empty label, a `.`, a NUL, or the reserved
    /// root `langgraph`).
    #[error("invalid namespace {namespace:?}: {reason}")]
    InvalidNamespace {
        /// The namespace as given.
        namespace: Vec<String>,
        /// Which rule it breaks.
        reason: &'static str,
    },
    /// A value given to [`Store::put`] is not a JSON object.
    #[error("store values must be JSON objects, got {kind}")]
    InvalidValue {
        /// The JSON kind that was given (`"array"`, `"string"`, ...).
        kind: &'static str,
    },
    /// A search filter uses an unknown operator or a malformed condition.
    #[error("invalid filter on `{field}`: {reason}")]
    InvalidFilter {
        /// The filtered field.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The embedding model failed.
    #[error("embedding failed")]
    Embedding(#[source] BoxError),
    /// The backend failed (connection, query, ...). Downcast the source for details.
    #[error("store backend error")]
    Backend(#[source] BoxError),
}

/// LangGraph's `BaseStore`: JSON documents under namespaces, with filtered and semantic search.
///
/// Implement it with `async fn`s; code that needs a trait object uses [`DynStore`], which every
/// implementation gets for free (the engine holds an `Arc<dyn DynStore>`).
///
/// Semantics shared by every implementation (and checked by mnemograph-memory-milvus's conformance suite):
/// - `put` validates the namespace with [`validate_namespace`] and requires a JSON object; putting an
///   existing key replaces the value and keeps `created_at`.
/// - `search` matches every item whose namespace starts with `namespace_prefix` (an empty prefix
///   matches all), applies the filter (see [`matches_filter`]), then ranks by similarity to
///   `query` when the store has an index (items get a `score`), otherwise newest update first.
/// - Expired items (see [`TtlConfig`]) are invisible to every read.
pub trait Store: Send + Sync + 'static {
    /// The item at `namespace`/`key`, or `None`. Refreshes its TTL when the store is configured to.
    fn get(
        &self,
        namespace: &[String],
        key: &str,
    ) -> impl Future<Output = Result<Option<Item>, StoreError>> + Send;

    /// Stores `value` (a JSON object) at `namespace`/`key`, replacing what was there.
    ///
    /// `ttl` is the time to live; `None` means the store's default (which may be "forever").
    ///
    /// # Errors
    /// [`StoreError::InvalidNamespace`], [`StoreError::InvalidValue`], or a backend/embedding failure.
    fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: serde_json::Value,
        ttl: Option<Duration>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Deletes the item at `namespace`/`key`; deleting a missing item is not an error.
    fn delete(&self, namespace: &[String], key: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Items under `namespace_prefix` matching `query` (see the trait docs for ranking).
    ///
    /// # Errors
    /// [`StoreError::InvalidFilter`] for an unknown operator, or a backend/embedding failure.
    fn search(
        &self,
        namespace_prefix: &[String],
        query: SearchQuery,
    ) -> impl Future<Output = Result<Vec<SearchItem>, StoreError>> + Send;

    /// Distinct namespaces that hold at least one item, sorted, filtered and truncated by `options`.
    fn list_namespaces(
        &self,
        options: ListNamespaces,
    ) -> impl Future<Output = Result<Vec<Vec<String>>, StoreError>> + Send;

    /// How many live items there are under `namespace_prefix` (all items for an empty prefix),
    /// for quotas. By default the items are searched page by page and counted; stores that can
    /// count without reading the items do.
    fn count(&self, namespace_prefix: &[String]) -> impl Future<Output = Result<usize, StoreError>> + Send {
        async move {
            const PAGE: usize = 1000;
            let mut counted = 0;
            loop {
                let page =
                    self.search(namespace_prefix, SearchQuery::new().limit(PAGE).offset(counted)).await?;
                counted += page.len();
                if page.len() < PAGE {
                    return Ok(counted);
                }
            }
        }
    }
}

/// The object-safe twin of [`Store`], implemented for every store.
///
/// Hold a store as `Arc<dyn DynStore>`; that `Arc` is itself a [`Store`], so it can be passed to
/// generic code too.
pub trait DynStore: Send + Sync + 'static {
    /// See [`Store::get`].
    fn get<'a>(
        &'a self,
        namespace: &'a [String],
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Item>, StoreError>>;
    /// See [`Store::put`].
    fn put<'a>(
        &'a self,
        namespace: &'a [String],
        key: &'a str,
        value: serde_json::Value,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
    /// See [`Store::delete`].
    fn delete<'a>(&'a self, namespace: &'a [String], key: &'a str) -> BoxFuture<'a, Result<(), StoreError>>;
    /// See [`Store::search`].
    fn search<'a>(
        &'a self,
        namespace_prefix: &'a [String],
        query: SearchQuery,
    ) -> BoxFuture<'a, Result<Vec<SearchItem>, StoreError>>;
    /// See [`Store::list_namespaces`].
    fn list_namespaces(&self, options: ListNamespaces)
        -> BoxFuture<'_, Result<Vec<Vec<String>>, StoreError>>;
    /// See [`Store::count`].
    fn count<'a>(&'a self, namespace_prefix: &'a [String]) -> BoxFuture<'a, Result<usize, StoreError>>;
}

impl<T: Store> DynStore for T {
    fn get<'a>(
        &'a self,
        namespace: &'a [String],
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Item>, StoreError>> {
        Box::pin(Store::get(self, namespace, key))
    }
    fn put<'a>(
        &'a self,
        namespace: &'a [String],
        key: &'a str,
        value: serde_json::Value,
        ttl: Option<Duration>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(Store::put(self, namespace, key, value, ttl))
    }
    fn delete<'a>(&'a self, namespace: &'a [String], key: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(Store::delete(self, namespace, key))
    }
    fn search<'a>(
        &'a self,
        namespace_prefix: &'a [String],
        query: SearchQuery,
    ) -> BoxFuture<'a, Result<Vec<SearchItem>, StoreError>> {
        Box::pin(Store::search(self, namespace_prefix, query))
    }
    fn list_namespaces(
        &self,
        options: ListNamespaces,
    ) -> BoxFuture<'_, Result<Vec<Vec<String>>, StoreError>> {
        Box::pin(Store::list_namespaces(self, options))
    }
    fn count<'a>(&'a self, namespace_prefix: &'a [String]) -> BoxFuture<'a, Result<usize, StoreError>> {
        Box::pin(Store::count(self, namespace_prefix))
    }
}

// Lets generic code (`fn f<S: Store>`) take the engine's `Arc<dyn DynStore>` without a wrapper.
impl Store for std::sync::Arc<dyn DynStore> {
    async fn get(&self, namespace: &[String], key: &str) -> Result<Option<Item>, StoreError> {
        DynStore::get(&**self, namespace, key).await
    }
    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: serde_json::Value,
        ttl: Option<Duration>,
    ) -> Result<(), StoreError> {
        DynStore::put(&**self, namespace, key, value, ttl).await
    }
    async fn delete(&self, namespace: &[String], key: &str) -> Result<(), StoreError> {
        DynStore::delete(&**self, namespace, key).await
    }
    async fn search(
        &self,
        namespace_prefix: &[String],
        query: SearchQuery,
    ) -> Result<Vec<SearchItem>, StoreError> {
        DynStore::search(&**self, namespace_prefix, query).await
    }
    async fn list_namespaces(&self, options: ListNamespaces) -> Result<Vec<Vec<String>>, StoreError> {
        DynStore::list_namespaces(&**self, options).await
    }
    async fn count(&self, namespace_prefix: &[String]) -> Result<usize, StoreError> {
        DynStore::count(&**self, namespace_prefix).await
    }
}

#[cfg(test)]
mod tests;
