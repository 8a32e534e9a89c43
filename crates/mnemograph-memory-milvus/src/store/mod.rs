//! [`MilvusStore`]: mnemograph-checkpoint's [`Store`] (LangGraph's `BaseStore`) in a Milvus collection.
//!
//! One row per item and embedded field. The primary key `<namespace>/<key>#<part>` is derived from
//! the item's address with an injective encoding (see `codec`), so a `put` of an existing key
//! upserts the same rows, and namespaces never leak into each other whatever their labels hold.
//! Row 0 of an item always exists; with an [`IndexConfig`] naming several fields, rows 1.. carry
//! the other fields' vectors (a copy of the document each, so a search hit is one row read).
//!
//! | field | type | |
//! |---|---|---|
//! | `id` | VARCHAR primary key | `<namespace>/<key>#<part>`, encoded |
//! | `part` | INT64 | which embedded field; 0 for the item itself |
//! | `namespace` | VARCHAR | labels, encoded, joined with `.` (Trie index) |
//! | `key`, `value` | VARCHAR, JSON | as given |
//! | `created_at`, `updated_at`, `expires_at` | INT64 | ms since the epoch; `i64::MAX` = never |
//! | `ttl_ms`, `has_vector`, `embedding` | INT64, BOOL, FLOAT_VECTOR | TTL to refresh; vector (HNSW, cosine) |

mod codec;
mod expr;
mod search;
mod write;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use milvus::v2::prelude::*;
use mnemograph_checkpoint::store::{
    DynEmbeddings, IndexConfig, Item, ListNamespaces, SearchItem, SearchQuery, Store, StoreError, TtlConfig,
};

use self::codec::{fields, Clock};
use mnemograph_memory::Error as MemoryError;

use crate::collection::{self, Collection};
use crate::error::{Error, Result};
use crate::schema::Consistency;

/// Milvus's largest VARCHAR.
const VARCHAR_MAX: u32 = 65_535;
/// Vector length of collections without an index: Milvus requires a vector field.
const PLACEHOLDER_DIMS: usize = 2;

/// Where and how a [`MilvusStore`] keeps its items.
///
/// ```
/// use mnemograph_checkpoint::store::TtlConfig;
/// use mnemograph_memory_milvus::MilvusStoreConfig;
/// use std::time::Duration;
///
/// let c = MilvusStoreConfig::new("http://127.0.0.1:19530")
///     .collection("app_store")
///     .ttl(TtlConfig::new(Some(Duration::from_secs(86_400))));
/// assert_eq!(c.key_max_bytes, 1024);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MilvusStoreConfig {
    /// gRPC endpoint, e.g. `http://127.0.0.1:19530`.
    pub url: String,
    /// `user:password` or an API key; `None` for an open server such as Milvus Lite.
    pub token: Option<String>,
    /// Collection name (default `langgraph_store`).
    pub collection: String,
    /// Read consistency (default strong: a `get` after a `put` must see it, as the trait requires).
    pub consistency: Consistency,
    /// Expiry policy, as mnemograph-checkpoint's `InMemoryStore` (default: no TTL, reads refresh).
    pub ttl: TtlConfig,
    /// Byte limit of the *encoded* namespace (default 2048; labels outside `[A-Za-z0-9-]` take 3
    /// bytes per byte encoded). Longer namespaces are refused by `put`.
    pub namespace_max_bytes: u32,
    /// Byte limit of a key (default 1024). Longer keys are refused by `put`.
    pub key_max_bytes: u32,
}

crate::collection::target_setters!(MilvusStoreConfig);

impl MilvusStoreConfig {
    /// The defaults above, for the server at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            token: None,
            collection: "langgraph_store".to_owned(),
            consistency: Consistency::Strong,
            ttl: TtlConfig::default(),
            namespace_max_bytes: 2048,
            key_max_bytes: 1024,
        }
    }
    /// Sets the expiry policy.
    #[must_use]
    pub fn ttl(mut self, ttl: TtlConfig) -> Self {
        self.ttl = ttl;
        self
    }

    /// The primary key holds the encoded namespace, `/`, the encoded key (≤ 3 bytes per byte) and
    /// `#<part>`.
    fn id_max_bytes(&self) -> u64 {
        u64::from(self.namespace_max_bytes) + 3 * u64::from(self.key_max_bytes) + 24
    }
}

/// mnemograph-checkpoint's [`Store`] in Milvus: LangGraph's `BaseStore` semantics (the same as `InMemoryStore`:
/// validation, `created_at` kept on replace, prefix search, filters, semantic ranking, TTL) for
/// data shared across processes.
///
/// - **Search** without a query (or without an index) scans the matching rows' ids and times, sorts
///   them newest update first, then reads the page. With a query it is a Milvus vector search
///   (cosine; `score` is the similarity), widened until enough items pass the filter; items with no
///   embedded field follow, newest first, as in `InMemoryStore`.
/// - **Filters** are evaluated by Milvus where that is exact enough (equality and ordering on
///   scalars) and always re-checked with mnemograph-checkpoint's `matches_filter`, so results match
///   `InMemoryStore` (`$ne` and dotted names run client-side).
/// - **TTL**: `expires_at` hides expired rows from every read; reads refresh it when configured;
///   writes delete expired rows every `sweep_interval`.
///
/// Limits: a put is read-then-upsert, not a transaction (two concurrent first puts of one key may
/// disagree on `created_at`; a refreshing `get` racing a `put` of the same key may restore the
/// value it read); scans read all ids under a prefix (Milvus has no ordered query), and a vector
/// search reaches at most Milvus's top-k cap (16384 rows). Cloning shares the connection.
///
/// ```no_run
/// use mnemograph_checkpoint::store::{namespace, HashingEmbeddings, IndexConfig, SearchQuery, Store};
/// use mnemograph_memory_milvus::{MilvusStore, MilvusStoreConfig};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // HashingEmbeddings keeps this example offline; use a real model in applications.
/// let index = IndexConfig::new(HashingEmbeddings::new(256)).fields(["text"]);
/// let store = MilvusStore::connect(MilvusStoreConfig::new("http://127.0.0.1:19530"), Some(index)).await?;
/// let ns = namespace(["memories", "user-42"]);
/// store.put(&ns, "pref", json!({"text": "prefers dark roast coffee"}), None).await?;
/// let hits = store.search(&ns, SearchQuery::new().query("coffee").limit(1)).await?;
/// assert_eq!(hits[0].key, "pref");
/// // Nodes reach it as `runtime.store()` once the graph is compiled with `.with_store(store)`.
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MilvusStore {
    /// The SDK client; clones share one gRPC channel.
    client: ClientV2,
    config: MilvusStoreConfig,
    index: Option<IndexConfig>,
    /// Hands out `updated_at`s, strictly increasing, so "newest first" keeps the write order.
    clock: Arc<Clock>,
    /// When writes last deleted expired rows; a `std` mutex because it is held for one comparison.
    last_sweep: Arc<Mutex<Option<Instant>>>,
}

impl fmt::Debug for MilvusStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MilvusStore")
            .field("config", &self.config)
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl MilvusStore {
    /// Connects, and creates and loads the collection when it does not exist. With `index`, puts
    /// embed its fields and searches with a query rank by similarity; without, queries are ignored.
    ///
    /// The collection's vector length is fixed when it is created: reopen it with a model of the
    /// same dimension (or with no index, if it was created without).
    ///
    /// # Errors
    /// [`MemoryError::InvalidInput`] for limits beyond Milvus's; [`Error::Milvus`] when the server is
    /// unreachable or refuses the schema.
    pub async fn connect(config: MilvusStoreConfig, index: Option<IndexConfig>) -> Result<Self> {
        if config.id_max_bytes() > u64::from(VARCHAR_MAX) {
            return Err(MemoryError::InvalidInput {
                what: "namespace_max_bytes or key_max_bytes",
                reason: "the primary key would exceed Milvus's 65535-byte VARCHAR",
            }
            .into());
        }
        let client = collection::connect(&config.url, config.token.as_deref()).await?;
        let store =
            Self { client, config, index, clock: Arc::default(), last_sweep: Arc::new(Mutex::new(None)) };
        store.ensure_collection().await?;
        Ok(store)
    }

    /// The configuration.
    pub fn config(&self) -> &MilvusStoreConfig {
        &self.config
    }

    /// The SDK client, for operations this type does not wrap.
    pub fn client(&self) -> &ClientV2 {
        &self.client
    }

    fn dims(&self) -> usize {
        self.index.as_ref().map_or(PLACEHOLDER_DIMS, |i| DynEmbeddings::dims(&*i.embed))
    }

    async fn ensure_collection(&self) -> Result<()> {
        let collection = self.collection();
        if !collection.exists().await? {
            let req = CreateCollectionRequest::builder()
                .collection_name(&self.config.collection)
                .schema(self.schema())
                // Indexes given at creation: `create_index` waits through `AllocTimestamp`,
                // which Milvus Lite does not implement.
                .index_params(vec![
                    IndexParam::new()
                        .field_name(fields::EMBEDDING)
                        .index_type(IndexType::Hnsw)
                        .metric_type(MetricType::Cosine)
                        .extra_params(HashMap::from([
                            ("M".to_owned(), "16".to_owned()),
                            ("efConstruction".to_owned(), "200".to_owned()),
                        ])),
                    IndexParam::new().field_name(fields::NAMESPACE).index_type(IndexType::Trie),
                ]);
            collection.create(req.build()?).await?;
        }
        collection.load().await
    }

    fn schema(&self) -> CollectionSchema {
        let c = &self.config;
        let field = |name: &str, t: DataType| FieldSchema::new().name(name).data_type(t);
        CollectionSchema::new()
            .add_field(
                field(fields::ID, DataType::VarChar)
                    .max_length(u32::try_from(c.id_max_bytes()).unwrap_or(VARCHAR_MAX))
                    .primary_key(true)
                    .auto_id(false),
            )
            .add_field(field(fields::PART, DataType::Int64))
            .add_field(field(fields::NAMESPACE, DataType::VarChar).max_length(c.namespace_max_bytes))
            .add_field(field(fields::KEY, DataType::VarChar).max_length(c.key_max_bytes.max(1)))
            .add_field(field(fields::VALUE, DataType::Json))
            .add_field(field(fields::CREATED_AT, DataType::Int64))
            .add_field(field(fields::UPDATED_AT, DataType::Int64))
            .add_field(field(fields::EXPIRES_AT, DataType::Int64))
            .add_field(field(fields::TTL_MS, DataType::Int64))
            .add_field(field(fields::HAS_VECTOR, DataType::Bool))
            .add_field(field(fields::EMBEDDING, DataType::FloatVector).dimension(self.dims() as u32))
    }

    /// Drops the collection and everything in it.
    ///
    /// # Errors
    /// [`Error::Milvus`].
    pub async fn drop_collection(&self) -> Result<()> {
        self.collection().drop().await
    }

    /// Seals the rows written so far into indexed segments (after a bulk import; see
    /// [`MilvusMemory::flush`](crate::MilvusMemory::flush) for why this is optional).
    ///
    /// # Errors
    /// [`Error::Milvus`].
    pub async fn flush(&self) -> Result<()> {
        self.collection().flush().await
    }

    /// The store's collection.
    fn collection(&self) -> Collection<'_> {
        Collection { client: &self.client, name: &self.config.collection }
    }

    /// Deletes expired rows now (writes also do it every `sweep_interval`); returns how many rows
    /// Milvus reports deleted.
    ///
    /// # Errors
    /// [`Error::Milvus`].
    pub async fn sweep_expired(&self) -> Result<u64> {
        let now = codec::millis(std::time::SystemTime::now());
        let filter = format!("{} <= {now}", fields::EXPIRES_AT);
        let req = DeleteRequest::builder().collection_name(&self.config.collection).filter(filter).build()?;
        let deleted = self.client.delete(req).await?.delete_count();
        if let Ok(mut last) = self.last_sweep.lock() {
            *last = Some(Instant::now());
        }
        Ok(u64::try_from(deleted).unwrap_or(0))
    }

    /// Runs [`sweep_expired`](Self::sweep_expired) when the last sweep is older than the interval.
    async fn maybe_sweep(&self) -> Result<()> {
        let due = match self.last_sweep.lock() {
            Ok(mut last) => {
                let due = last.is_none_or(|t| t.elapsed() >= self.config.ttl.sweep_interval);
                if due {
                    // Claim the sweep so concurrent writes do not all send one.
                    *last = Some(Instant::now());
                }
                due
            }
            Err(_) => false,
        };
        if due {
            self.sweep_expired().await?;
        }
        Ok(())
    }

    fn consistency(&self) -> ConsistencyLevel {
        self.config.consistency.to_milvus()
    }
}

/// A backend failure as the trait's error; the source downcasts to [`Error`].
fn backend(e: impl Into<Error>) -> StoreError {
    StoreError::Backend(Box::new(e.into()))
}

impl Store for MilvusStore {
    async fn get(&self, namespace: &[String], key: &str) -> Result<Option<Item>, StoreError> {
        self.get_item(namespace, key).await
    }

    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: serde_json::Value,
        ttl: Option<std::time::Duration>,
    ) -> Result<(), StoreError> {
        self.put_item(namespace, key, value, ttl).await
    }

    async fn delete(&self, namespace: &[String], key: &str) -> Result<(), StoreError> {
        self.delete_item(namespace, key).await
    }

    async fn search(
        &self,
        namespace_prefix: &[String],
        query: SearchQuery,
    ) -> Result<Vec<SearchItem>, StoreError> {
        self.search_items(namespace_prefix, query).await
    }

    async fn list_namespaces(&self, options: ListNamespaces) -> Result<Vec<Vec<String>>, StoreError> {
        self.namespaces(options).await
    }
}
