//! [`SqliteStore`]: LangGraph's `SqliteStore` tables (`store`, `store_vectors`) as a
//! [`Store`], so long-term memories outlive the process in one file, which Python's
//! `langgraph.store.sqlite.SqliteStore` opens too.

mod items;
mod schema;
mod search;
mod time;

use std::time::Duration;

use mnemograph_checkpoint::store::{
    IndexConfig, Item, ListNamespaces, SearchItem, SearchQuery, Store, StoreError, SweepSchedule, TtlConfig,
};
use serde_json::Value;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use sqlx::SqlitePool;

use crate::error::{Error, Result};
use crate::open::open_pool;
use crate::options::{connect_options, pool_options};

/// A [`Store`] in one SQLite file, in the tables and bytes of LangGraph's Python `SqliteStore`
/// (package `langgraph-checkpoint-sqlite`): items a Python process put are read here and the
/// other way round, vectors included (`store_vectors.embedding` holds little-endian `f32`s, as
/// `sqlite_vec.serialize_float32` writes them).
///
/// It follows the same contract as [`InMemoryStore`](mnemograph_checkpoint::store::InMemoryStore):
/// replacing an item keeps its `created_at`, searches without a query list the newest write first,
/// a search with a query ranks by the best cosine similarity among the item's embedded fields,
/// filters behave as [`matches_filter`](mnemograph_checkpoint::store::matches_filter) says, and an
/// expired item is invisible to every read (Python only deletes it on its next sweep), and a
/// search pushes the expiry of the items it returns out by their TTL again, as `get` does, unless
/// [`refresh_on_read`](mnemograph_checkpoint::store::TtlConfig::refresh_on_read) is off. Searches
/// read the items under the namespace prefix and score them in the process, so they suit the
/// thousands of memories of one user, not millions of documents under one prefix.
///
/// Cloning is cheap: clones share the connection pool.
///
/// ```
/// use mnemograph_checkpoint::store::{namespace, HashingEmbeddings, IndexConfig, SearchQuery, Store};
/// use mnemograph_checkpoint_sqlite::SqliteStore;
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // A file path in an application; `:memory:` here. Tables are created when missing.
/// let store = SqliteStore::builder()
///     .index(IndexConfig::new(HashingEmbeddings::new(256)).fields(["text"]))
///     .connect(":memory:")
///     .await?;
/// let ns = namespace(["memories", "user-42"]);
/// store.put(&ns, "pref", json!({"text": "prefers dark roast coffee"}), None).await?;
/// store.put(&ns, "pet", json!({"text": "has a cat named Miso"}), None).await?;
///
/// let hits = store.search(&ns, SearchQuery::new().query("what coffee do they like").limit(1)).await?;
/// assert_eq!(hits[0].key, "pref");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    index: Option<IndexConfig>,
    ttl: TtlConfig,
    /// Whether the database has `store_vectors`: a store without an index still drops an
    /// item's vectors when it replaces or deletes the item, so none outlive what they embed.
    has_vectors: bool,
    /// When writes last deleted expired rows.
    last_sweep: SweepSchedule,
}

/// How a [`SqliteStore`] embeds and expires items; from [`SqliteStore::builder`].
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct SqliteStoreBuilder {
    index: Option<IndexConfig>,
    ttl: TtlConfig,
}

impl SqliteStoreBuilder {
    /// Embeds the index's fields on `put` and ranks searches that have a query by similarity
    /// (LangGraph's `index=`). Without it, a query is ignored and searches list newest first.
    pub fn index(mut self, index: IndexConfig) -> Self {
        self.index = Some(index);
        self
    }

    /// Expires items (LangGraph's `ttl=`); by default items live forever.
    pub fn ttl(mut self, ttl: TtlConfig) -> Self {
        self.ttl = ttl;
        self
    }

    /// Opens (creating when missing) the database `target` — a file path, a `sqlite://` URL, or
    /// `:memory:` — with the options of [`connect_options`], and runs the migrations not yet
    /// applied.
    ///
    /// # Errors
    /// [`Error::Sqlx`] when the URL is malformed or the file cannot be opened or created;
    /// [`Error::Busy`] when another connection holds the database locked past the busy timeout.
    pub async fn connect(self, target: &str) -> Result<SqliteStore> {
        self.connect_with(connect_options(target)?, pool_options(target)).await
    }

    /// Opens a pool built from explicit options and runs the migrations not yet applied.
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_with(
        self,
        connect: SqliteConnectOptions,
        pool: SqlitePoolOptions,
    ) -> Result<SqliteStore> {
        let pool = open_pool(connect, pool).await?;
        self.from_pool(pool).await
    }

    /// Uses an existing pool (the one of a [`SqliteCheckpointer`](crate::SqliteCheckpointer)
    /// on the same file, say) and runs the migrations not yet applied.
    ///
    /// # Errors
    /// [`Error::Busy`] or [`Error::Sqlx`] when the migrations cannot run.
    pub async fn from_pool(self, pool: SqlitePool) -> Result<SqliteStore> {
        let has_vectors = schema::setup(&pool, self.index.is_some()).await?;
        Ok(SqliteStore {
            pool,
            index: self.index,
            ttl: self.ttl,
            has_vectors,
            last_sweep: SweepSchedule::default(),
        })
    }
}

impl SqliteStore {
    /// A store without an index or expiry at `target`; see [`SqliteStoreBuilder::connect`].
    ///
    /// # Errors
    /// As [`SqliteStoreBuilder::connect`].
    pub async fn connect(target: &str) -> Result<Self> {
        Self::builder().connect(target).await
    }

    /// Configures an index or expiry before opening.
    pub fn builder() -> SqliteStoreBuilder {
        SqliteStoreBuilder::default()
    }

    /// The connection pool.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Deletes the expired items now (LangGraph's `sweep_ttl`) and returns how many. Reads never
    /// return expired items; this only reclaims their space, as writes also do every
    /// [`TtlConfig::sweep_interval`].
    ///
    /// # Errors
    /// [`Error::Busy`] or [`Error::Sqlx`].
    pub async fn sweep_expired(&self) -> Result<u64> {
        items::sweep(self).await
    }

    /// Whether writes are due to sweep, marking the sweep as done when they are.
    fn sweep_due(&self) -> bool {
        self.last_sweep.due(self.ttl.sweep_interval)
    }
}

impl Store for SqliteStore {
    async fn get(&self, namespace: &[String], key: &str) -> Result<Option<Item>, StoreError> {
        items::get(self, namespace, key).await.map_err(Into::into)
    }

    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: Value,
        ttl: Option<Duration>,
    ) -> Result<(), StoreError> {
        items::put(self, namespace, key, value, ttl).await
    }

    async fn delete(&self, namespace: &[String], key: &str) -> Result<(), StoreError> {
        items::delete(self, namespace, key).await.map_err(Into::into)
    }

    async fn search(
        &self,
        namespace_prefix: &[String],
        query: SearchQuery,
    ) -> Result<Vec<SearchItem>, StoreError> {
        search::search(self, namespace_prefix, query).await
    }

    async fn list_namespaces(&self, options: ListNamespaces) -> Result<Vec<Vec<String>>, StoreError> {
        search::list_namespaces(self, options).await.map_err(Into::into)
    }

    async fn count(&self, namespace_prefix: &[String]) -> Result<usize, StoreError> {
        search::count(self, namespace_prefix).await.map_err(Into::into)
    }
}

impl From<Error> for StoreError {
    fn from(err: Error) -> Self {
        StoreError::Backend(Box::new(err))
    }
}

/// A namespace as the `prefix` column holds it: labels joined by `.` (which labels may not
/// contain).
fn prefix_text(namespace: &[String]) -> String {
    namespace.join(".")
}

/// The `prefix` condition of a namespace and everything under it, case-sensitive as `=` is:
/// `GLOB` with its metacharacters escaped (it has no `ESCAPE` clause), as LangGraph writes it.
fn under(namespace_prefix: &[String]) -> (&'static str, Vec<String>) {
    if namespace_prefix.is_empty() {
        return ("1", Vec::new());
    }
    let path = prefix_text(namespace_prefix);
    let glob = path.replace('[', "[[]").replace('*', "[*]").replace('?', "[?]");
    ("(prefix = ? OR prefix GLOB ?)", vec![path, format!("{glob}.*")])
}
