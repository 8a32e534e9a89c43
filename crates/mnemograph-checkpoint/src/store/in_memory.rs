//! [`InMemoryStore`]: the in-process [`Store`], with optional semantic search and TTL.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use serde_json::Value;
use tokio::time::Instant;

use super::{
    cosine_similarity, matches_filter, texts_to_embed, validate_filter, validate_put, DynEmbeddings,
    Embeddings, Item, ListNamespaces, SearchItem, SearchQuery, Store, StoreError,
};

/// Which model embeds documents and which of their fields (LangGraph's `IndexConfig`).
#[derive(Clone)]
#[non_exhaustive]
pub struct IndexConfig {
    /// The model; its [`dims`](DynEmbeddings::dims) is the index's dimension.
    pub embed: Arc<dyn DynEmbeddings>,
    /// Fields to embed: `"$"` is the whole document (as JSON text), `"a.b"` a nested field. An item
    /// gets one vector per present field and its score is the best of them. Default `["$"]`.
    pub fields: Vec<String>,
}

impl fmt::Debug for IndexConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexConfig")
            .field("dims", &DynEmbeddings::dims(&*self.embed))
            .field("fields", &self.fields)
            .finish()
    }
}

impl IndexConfig {
    /// Embeds whole documents with `embed`.
    pub fn new(embed: impl Embeddings) -> Self {
        Self::from_arc(Arc::new(embed))
    }
    /// Embeds whole documents with a shared model.
    pub fn from_arc(embed: Arc<dyn DynEmbeddings>) -> Self {
        Self { embed, fields: vec!["$".to_owned()] }
    }
    /// Embeds these fields instead of the whole document.
    #[must_use]
    pub fn fields<I: IntoIterator<Item = S>, S: Into<String>>(mut self, fields: I) -> Self {
        self.fields = fields.into_iter().map(Into::into).collect();
        self
    }

    /// The vector of each of the index's fields present in `value`, named by the field, in the
    /// order of [`fields`](Self::fields) ([`texts_to_embed`] says what a field's text is): what a
    /// store keeps one row per field of. Nothing is embedded when no field is present.
    ///
    /// # Errors
    /// [`StoreError::Embedding`] when the model fails.
    pub async fn embed_fields(&self, value: &Value) -> Result<Vec<(String, Vec<f32>)>, StoreError> {
        let (fields, texts): (Vec<&String>, Vec<String>) = self
            .fields
            .iter()
            .filter_map(|f| Some((f, texts_to_embed(std::slice::from_ref(f), value).pop()?)))
            .unzip();
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let vectors =
            DynEmbeddings::embed_documents(&*self.embed, &texts).await.map_err(StoreError::Embedding)?;
        Ok(fields.into_iter().cloned().zip(vectors).collect())
    }
}

/// Expiry of items (LangGraph's `TTLConfig`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TtlConfig {
    /// Whether a `get`, and a search for the items it returns, pushes the item's expiry out by its
    /// TTL again (LangGraph's default: yes).
    pub refresh_on_read: bool,
    /// The TTL of items put with `ttl: None`; `None` keeps them forever.
    pub default_ttl: Option<Duration>,
    /// How often writes sweep expired items out of memory (reads already hide them).
    pub sweep_interval: Duration,
}

impl Default for TtlConfig {
    fn default() -> Self {
        Self { refresh_on_read: true, default_ttl: None, sweep_interval: Duration::from_secs(60) }
    }
}

impl TtlConfig {
    /// Items expire `default_ttl` after their last write (or read, see `refresh_on_read`).
    pub fn new(default_ttl: Option<Duration>) -> Self {
        Self { default_ttl, ..Self::default() }
    }
    /// Sets whether reads refresh expiry.
    #[must_use]
    pub fn refresh_on_read(mut self, refresh: bool) -> Self {
        self.refresh_on_read = refresh;
        self
    }
}

/// One stored item with what search and expiry need.
#[derive(Debug, Clone)]
struct Entry {
    item: Item,
    /// One vector per embedded field; empty without an index.
    vectors: Vec<Vec<f32>>,
    /// The TTL it was put with, reapplied when a read refreshes it.
    ttl: Option<Duration>,
    expires_at: Option<Instant>,
    /// Write order: the no-query search order (newest first), immune to equal wall-clock times.
    seq: u64,
}

impl Entry {
    fn live(&self, now: Instant) -> bool {
        self.expires_at.is_none_or(|t| t > now)
    }

    /// Pushes the expiry out by the item's TTL again, from `now`: what a refreshing read does.
    fn refresh(&mut self, now: Instant) {
        if let Some(ttl) = self.ttl {
            self.expires_at = Some(now + ttl);
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    data: BTreeMap<Vec<String>, BTreeMap<String, Entry>>,
    seq: u64,
    last_sweep: Option<Instant>,
}

/// The in-process [`Store`] (LangGraph's `InMemoryStore`): for tests, examples and single-process
/// apps. Cloning shares the data.
///
/// With an [`IndexConfig`] it ranks searches by cosine similarity; with a [`TtlConfig`] items expire.
/// Expiry uses tokio's clock, so tests can drive it with `tokio::time::pause()`/`advance()`.
#[derive(Clone)]
pub struct InMemoryStore {
    /// parking_lot's `Mutex`: every critical section is short and synchronous (embedding happens
    /// before locking), and it does not poison if a caller panics.
    inner: Arc<Mutex<Inner>>,
    index: Option<IndexConfig>,
    ttl: TtlConfig,
}

impl fmt::Debug for InMemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.inner.lock();
        f.debug_struct("InMemoryStore")
            .field("namespaces", &inner.data.len())
            .field("index", &self.index)
            .field("ttl", &self.ttl)
            .finish()
    }
}

impl Default for InMemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryStore {
    /// A store without semantic search or expiry.
    pub fn new() -> Self {
        Self { inner: Arc::default(), index: None, ttl: TtlConfig::default() }
    }
    /// A store that embeds documents and ranks searches by cosine similarity.
    pub fn with_index(index: IndexConfig) -> Self {
        Self { index: Some(index), ..Self::new() }
    }
    /// The same store with an expiry policy.
    #[must_use]
    pub fn ttl(mut self, ttl: TtlConfig) -> Self {
        self.ttl = ttl;
        self
    }

    /// Drops expired items now; returns how many.
    pub fn sweep_expired(&self) -> usize {
        let mut inner = self.inner.lock();
        sweep(&mut inner, Instant::now())
    }

    /// Pushes the expiry of the items a search returned out by their TTL again, as `get` does
    /// (LangGraph's `search(..., refresh_ttl=None)` follows `refresh_on_read`). An item that
    /// expired since the search stays expired.
    fn refresh(&self, returned: &[SearchItem]) {
        let now = Instant::now();
        let mut inner = self.inner.lock();
        for hit in returned {
            let entry =
                inner.data.get_mut(&hit.item.namespace).and_then(|items| items.get_mut(&hit.item.key));
            if let Some(entry) = entry.filter(|e| e.live(now)) {
                entry.refresh(now);
            }
        }
    }

    /// The texts to embed for a document, one per configured field that is present.
    fn texts(&self, value: &Value) -> Vec<String> {
        self.index.as_ref().map_or_else(Vec::new, |index| texts_to_embed(&index.fields, value))
    }
}

fn sweep(inner: &mut Inner, now: Instant) -> usize {
    let mut removed = 0;
    inner.data.retain(|_, items| {
        let before = items.len();
        items.retain(|_, e| e.live(now));
        removed += before - items.len();
        !items.is_empty()
    });
    inner.last_sweep = Some(now);
    removed
}

impl Store for InMemoryStore {
    async fn get(&self, namespace: &[String], key: &str) -> Result<Option<Item>, StoreError> {
        let now = Instant::now();
        let mut inner = self.inner.lock();
        let Some(entry) = inner.data.get_mut(namespace).and_then(|items| items.get_mut(key)) else {
            return Ok(None);
        };
        if !entry.live(now) {
            return Ok(None);
        }
        if self.ttl.refresh_on_read {
            entry.refresh(now);
        }
        Ok(Some(entry.item.clone()))
    }

    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: Value,
        ttl: Option<Duration>,
    ) -> Result<(), StoreError> {
        validate_put(namespace, &value)?;
        // Embed before taking the lock: the model may be slow or remote.
        let texts = self.texts(&value);
        let vectors = match (&self.index, texts.is_empty()) {
            (Some(index), false) => {
                DynEmbeddings::embed_documents(&*index.embed, &texts).await.map_err(StoreError::Embedding)?
            }
            _ => Vec::new(),
        };
        let ttl = ttl.or(self.ttl.default_ttl);
        let (now, wall) = (Instant::now(), SystemTime::now());
        let mut inner = self.inner.lock();
        if inner.last_sweep.is_none_or(|t| now.duration_since(t) >= self.ttl.sweep_interval) {
            sweep(&mut inner, now);
        }
        inner.seq += 1;
        let seq = inner.seq;
        let items = inner.data.entry(namespace.to_vec()).or_default();
        let created_at = items.get(key).filter(|e| e.live(now)).map_or(wall, |e| e.item.created_at);
        let item =
            Item { namespace: namespace.to_vec(), key: key.to_owned(), value, created_at, updated_at: wall };
        let expires_at = ttl.map(|t| now + t);
        items.insert(key.to_owned(), Entry { item, vectors, ttl, expires_at, seq });
        Ok(())
    }

    async fn delete(&self, namespace: &[String], key: &str) -> Result<(), StoreError> {
        let mut inner = self.inner.lock();
        if let Some(items) = inner.data.get_mut(namespace) {
            items.remove(key);
            if items.is_empty() {
                inner.data.remove(namespace);
            }
        }
        Ok(())
    }

    async fn search(
        &self,
        namespace_prefix: &[String],
        query: SearchQuery,
    ) -> Result<Vec<SearchItem>, StoreError> {
        if let Some(filter) = &query.filter {
            validate_filter(filter)?;
        }
        let query_vector = match (&self.index, &query.query) {
            (Some(index), Some(q)) => {
                Some(DynEmbeddings::embed_query(&*index.embed, q).await.map_err(StoreError::Embedding)?)
            }
            _ => None,
        };
        let now = Instant::now();
        let mut hits: Vec<(Option<f64>, u64, SearchItem)> = Vec::new();
        {
            let inner = self.inner.lock();
            // BTreeMap order lets the scan start at the prefix instead of visiting every namespace.
            for (ns, items) in inner.data.range(namespace_prefix.to_vec()..) {
                if !ns.starts_with(namespace_prefix) {
                    break;
                }
                for entry in items.values().filter(|e| e.live(now)) {
                    if let Some(filter) = &query.filter {
                        if !matches_filter(&entry.item.value, filter)? {
                            continue;
                        }
                    }
                    let score = query_vector
                        .as_ref()
                        .and_then(|q| entry.vectors.iter().map(|v| cosine_similarity(q, v)).reduce(f64::max));
                    hits.push((score, entry.seq, SearchItem { item: entry.item.clone(), score }));
                }
            }
        }
        // Scored items best first, then unscored ones; newest write first within equal scores.
        hits.sort_by(|a, b| {
            let by_score = match (a.0, b.0) {
                (Some(x), Some(y)) => y.total_cmp(&x),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            };
            by_score.then(b.1.cmp(&a.1))
        });
        let page: Vec<SearchItem> =
            hits.into_iter().skip(query.offset).take(query.limit).map(|h| h.2).collect();
        if self.ttl.refresh_on_read {
            self.refresh(&page);
        }
        Ok(page)
    }

    async fn count(&self, namespace_prefix: &[String]) -> Result<usize, StoreError> {
        let now = Instant::now();
        let inner = self.inner.lock();
        let under = inner
            .data
            .range(namespace_prefix.to_vec()..)
            .take_while(|(ns, _)| ns.starts_with(namespace_prefix));
        Ok(under.map(|(_, items)| items.values().filter(|e| e.live(now)).count()).sum())
    }

    async fn list_namespaces(&self, options: ListNamespaces) -> Result<Vec<Vec<String>>, StoreError> {
        let now = Instant::now();
        let inner = self.inner.lock();
        let live = inner.data.iter().filter(|(_, items)| items.values().any(|e| e.live(now)));
        Ok(options.apply(live.map(|(ns, _)| ns.as_slice())))
    }
}
