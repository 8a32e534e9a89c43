//! [`PostgresStore`]: LangGraph's `PostgresStore` table (`store`) as a [`Store`], so long-term
//! memories outlive the process in the database Python's `langgraph.store.postgres.PostgresStore`
//! reads and writes too.

mod items;
mod schema;
mod search;
mod vectors;

use std::str::FromStr;
use std::time::Duration;

use mnemograph_checkpoint::store::{
    DynEmbeddings, IndexConfig, Item, ListNamespaces, SearchItem, SearchQuery, Store, StoreError,
    SweepSchedule, TtlConfig,
};
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;

use crate::error::{Error, Result};

pub use vectors::VectorStorage;

/// A [`Store`] in PostgreSQL, in the table and rows of LangGraph's Python `PostgresStore`
/// (package `langgraph-checkpoint-postgres`): items a Python process put are read here and the
/// other way round, expiry included. Values are JSONB, a namespace is its labels joined by `.`
/// in `prefix`, and the schema is migrated as LangGraph numbers it in `store_migrations`.
///
/// It follows the same contract as [`InMemoryStore`](mnemograph_checkpoint::store::InMemoryStore):
/// replacing an item keeps its `created_at`, searches list the newest write first, filters behave
/// as [`matches_filter`](mnemograph_checkpoint::store::matches_filter) says, a search with a query
/// ranks by the best cosine similarity among the item's embedded fields, and an expired item is
/// invisible to every read (Python shows it until a sweep deletes it, unless told to omit it).
/// Filtered and ranked searches read the items under the namespace prefix and filter and score
/// them in the process, so they suit the thousands of memories of one user, not millions of
/// documents under one prefix.
///
/// Timestamps are the server's clock, so expiry agrees with Python's reads and sweeps whatever
/// the clients' clocks say. LangGraph's `ttl_minutes` column holds whole minutes: a write expires
/// exactly its TTL later, and a read that refreshes the item (as Python's does) extends it by the
/// TTL rounded up to a whole minute, never by less than it was written with. As in Python, a
/// search refreshes the items it returns, as `get` does, unless
/// [`refresh_on_read`](TtlConfig::refresh_on_read) is off.
///
/// # Semantic search
/// With an [`index`](PostgresStoreBuilder::index), `put` embeds the index's fields and keeps one
/// vector per field in LangGraph's `store_vectors` table (`prefix`, `key`, `field_name`,
/// `embedding`, `created_at`, `updated_at`; deleting the item deletes them), and a search with a
/// query ranks the items its namespace and filter keep by cosine similarity, computed here over
/// those items' vectors only; items with no vector follow, newest first. The table is created,
/// when missing, in one of two [`VectorStorage`] modes ([`vector_storage`](PostgresStore::vector_storage)
/// says which):
/// - [`VectorStorage::Pgvector`] when the server offers the `vector` extension: LangGraph's
///   vector migrations as Python runs them (the extension, a `vector(dims)` column, its HNSW
///   cosine index, `vector_migrations`), so Python's `PostgresStore` with the same model and
///   `dims` reads and ranks the vectors written here, and the other way round.
/// - [`VectorStorage::RealArray`] otherwise (Debian bookworm packages no pgvector): the same
///   table with a `real[]` column. Python's store reads and writes the items (without an index),
///   but its `setup()` with an index needs pgvector and fails, so vectors are this store's only.
///
/// A table that exists already is used as it is, whichever mode created it.
///
/// Cloning is cheap: clones share the connection pool.
///
/// ```no_run
/// use mnemograph_checkpoint::store::{namespace, SearchQuery, Store, TtlConfig};
/// use mnemograph_checkpoint_postgres::{PostgresCheckpointer, PostgresStore};
/// use serde_json::json;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// // Needs a running server. The store shares the checkpointer's connections.
/// let saver = PostgresCheckpointer::connect("postgres://postgres@127.0.0.1:5432/app").await?;
/// let store = PostgresStore::builder()
///     .ttl(TtlConfig::new(Some(Duration::from_secs(30 * 24 * 3600))))
///     .from_pool(saver.pool().clone())
///     .await?;
/// let ns = namespace(["memories", "user-42"]);
/// store.put(&ns, "pref", json!({"text": "prefers dark roast coffee", "kind": "pref"}), None).await?;
/// let prefs = store.search(&ns, SearchQuery::new().filter(json!({"kind": "pref"}))).await?;
/// assert_eq!(prefs[0].key, "pref");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresStore {
    pool: PgPool,
    index: Option<IndexConfig>,
    ttl: TtlConfig,
    /// How the database keeps vectors; `None` when it has no `store_vectors`. A store without an
    /// index still drops an item's vectors when it replaces the item, so none outlive what they
    /// embed.
    vectors: Option<VectorStorage>,
    /// When writes last deleted expired rows.
    last_sweep: SweepSchedule,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The pool's own Debug prints its options, which include the password.
        f.debug_struct("PostgresStore")
            .field("connections", &self.pool.size())
            .field("idle", &self.pool.num_idle())
            .field("index", &self.index)
            .field("ttl", &self.ttl)
            .field("vectors", &self.vectors)
            .finish()
    }
}

/// How a [`PostgresStore`] expires items; from [`PostgresStore::builder`].
#[derive(Debug, Clone, Default)]
#[must_use]
pub struct PostgresStoreBuilder {
    index: Option<IndexConfig>,
    ttl: TtlConfig,
}

impl PostgresStoreBuilder {
    /// Embeds the index's fields on `put` and ranks searches that have a query by similarity
    /// (LangGraph's `index=`); opening creates `store_vectors` when missing (see
    /// [semantic search](PostgresStore#semantic-search)). Without it, a query is ignored and
    /// searches list newest first.
    pub fn index(mut self, index: IndexConfig) -> Self {
        self.index = Some(index);
        self
    }

    /// Expires items (LangGraph's `ttl=`); by default items live forever.
    pub fn ttl(mut self, ttl: TtlConfig) -> Self {
        self.ttl = ttl;
        self
    }

    /// Connects a pool (10 connections at most) to `url` (as
    /// [`PostgresCheckpointer::connect`](crate::PostgresCheckpointer::connect) reads it) and runs
    /// the migrations not yet applied.
    ///
    /// # Errors
    /// [`Error::Sqlx`] for a malformed URL or an unreachable server; as
    /// [`from_pool`](Self::from_pool) otherwise.
    pub async fn connect(self, url: &str) -> Result<PostgresStore> {
        let options = PgConnectOptions::from_str(url)?;
        self.connect_with(options, PgPoolOptions::new().max_connections(10)).await
    }

    /// Connects a pool built from explicit options and runs the migrations not yet applied.
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_with(self, connect: PgConnectOptions, pool: PgPoolOptions) -> Result<PostgresStore> {
        let pool = pool.connect_with(connect).await?;
        self.from_pool(pool).await
    }

    /// Uses an existing pool (the one of a [`PostgresCheckpointer`](crate::PostgresCheckpointer)
    /// on the same database, say) and runs the migrations not yet applied.
    ///
    /// # Errors
    /// [`Error::Migrate`] when the server rejects a migration; [`Error::StoreSchemaTooNew`]
    /// when a newer LangGraph store migrated the database; with an index,
    /// [`Error::VectorSetup`] when the vector table cannot be created and
    /// [`Error::VectorDims`] or [`Error::UnknownVectorColumn`] when the existing one does not
    /// fit; [`Error::Sqlx`] otherwise.
    pub async fn from_pool(self, pool: PgPool) -> Result<PostgresStore> {
        let dims = self.index.as_ref().map(|index| DynEmbeddings::dims(&*index.embed));
        let vectors = schema::setup(&pool, dims).await?;
        Ok(PostgresStore {
            pool,
            index: self.index,
            ttl: self.ttl,
            vectors,
            last_sweep: SweepSchedule::default(),
        })
    }
}

impl PostgresStore {
    /// A store without expiry at `url`; see [`PostgresStoreBuilder::connect`].
    ///
    /// # Errors
    /// As [`PostgresStoreBuilder::connect`].
    pub async fn connect(url: &str) -> Result<Self> {
        Self::builder().connect(url).await
    }

    /// Configures expiry before opening.
    pub fn builder() -> PostgresStoreBuilder {
        PostgresStoreBuilder::default()
    }

    /// The connection pool.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// How the database keeps vectors (see [semantic search](PostgresStore#semantic-search));
    /// `None` when it has no `store_vectors` table, which only a store with an index creates.
    pub fn vector_storage(&self) -> Option<VectorStorage> {
        self.vectors
    }

    /// Deletes the expired items now (LangGraph's `sweep_ttl`) and returns how many. Reads never
    /// return expired items; this only reclaims their space, as writes also do every
    /// [`TtlConfig::sweep_interval`].
    ///
    /// # Errors
    /// [`Error::Sqlx`].
    pub async fn sweep_expired(&self) -> Result<u64> {
        items::sweep(&self.pool).await
    }

    /// Whether writes are due to sweep, marking the sweep as done when they are.
    fn sweep_due(&self) -> bool {
        self.last_sweep.due(self.ttl.sweep_interval)
    }
}

impl Store for PostgresStore {
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

/// Whether a text cannot be bound: PostgreSQL text holds no U+0000, so no stored item has it.
fn has_nul(text: &str) -> bool {
    text.contains('\0')
}

/// The SQL condition of a namespace and everything under it, its arguments bound as `$1` and
/// `$2`: LangGraph's `prefix = p OR prefix LIKE 'p.%'`, the `LIKE`
/// metacharacters of the labels escaped so that they match themselves.
fn under(namespace_prefix: &[String]) -> (&'static str, Vec<String>) {
    if namespace_prefix.is_empty() {
        return ("TRUE", Vec::new());
    }
    let path = prefix_text(namespace_prefix);
    let like = path.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    (r"(prefix = $1 OR prefix LIKE $2 ESCAPE '\')", vec![path, format!("{like}.%")])
}
