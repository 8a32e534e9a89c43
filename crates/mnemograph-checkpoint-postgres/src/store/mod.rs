//! [`PostgresStore`]: LangGraph's `PostgresStore` table (`store`) as a [`Store`], so long-term
//! memories outlive the process in the database Python's `langgraph.store.postgres.PostgresStore`
//! reads and writes too.

mod items;
mod schema;
mod search;

use std::str::FromStr;
use std::time::Duration;

use mnemograph_checkpoint::store::{
    IndexConfig, Item, ListNamespaces, SearchItem, SearchQuery, Store, StoreError, SweepSchedule, TtlConfig,
};
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::PgPool;

use crate::error::{Error, Result};

/// A [`Store`] in PostgreSQL, in the table and rows of LangGraph's Python `PostgresStore`
/// (package `langgraph-checkpoint-postgres`): items a Python process put are read here and the
/// other way round, expiry included. Values are JSONB, a namespace is its labels joined by `.`
/// in `prefix`, and the schema is migrated as LangGraph numbers it in `store_migrations`.
///
/// It follows the same contract as [`InMemoryStore`](mnemograph_checkpoint::store::InMemoryStore):
/// replacing an item keeps its `created_at`, searches list the newest write first, filters behave
/// as [`matches_filter`](mnemograph_checkpoint::store::matches_filter) says, and an expired item is
/// invisible to every read (Python shows it until a sweep deletes it, unless told to omit it).
/// Filtered searches read the items under the namespace prefix and filter them in the process,
/// so they suit the thousands of memories of one user, not millions of documents under one
/// prefix.
///
/// Timestamps are the server's clock, so expiry agrees with Python's reads and sweeps whatever
/// the clients' clocks say. LangGraph's `ttl_minutes` column holds whole minutes: a write expires
/// exactly its TTL later, and a read that refreshes the item (as Python's does) extends it by the
/// TTL rounded up to a whole minute, never by less than it was written with.
///
/// Semantic search is not offered: LangGraph keeps vectors in pgvector columns, and a store
/// configured with an [`index`](PostgresStoreBuilder::index) fails to open with
/// [`Error::NoVectorSupport`].
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
    ttl: TtlConfig,
    /// When writes last deleted expired rows.
    last_sweep: SweepSchedule,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The pool's own Debug prints its options, which include the password.
        f.debug_struct("PostgresStore")
            .field("connections", &self.pool.size())
            .field("idle", &self.pool.num_idle())
            .field("ttl", &self.ttl)
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
    /// Asks for semantic search (LangGraph's `index=`). Opening the store then fails with
    /// [`Error::NoVectorSupport`]: vectors on PostgreSQL need pgvector, which this store does not
    /// drive. It is here so that code written for other stores' builders says what is missing
    /// instead of silently ranking nothing.
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
    /// [`Error::NoVectorSupport`] with an index; [`Error::Sqlx`] for a malformed URL or an
    /// unreachable server; as [`from_pool`](Self::from_pool) otherwise.
    pub async fn connect(self, url: &str) -> Result<PostgresStore> {
        self.refuse_index()?;
        let options = PgConnectOptions::from_str(url)?;
        self.connect_with(options, PgPoolOptions::new().max_connections(10)).await
    }

    /// Connects a pool built from explicit options and runs the migrations not yet applied.
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_with(self, connect: PgConnectOptions, pool: PgPoolOptions) -> Result<PostgresStore> {
        self.refuse_index()?;
        let pool = pool.connect_with(connect).await?;
        self.from_pool(pool).await
    }

    /// Uses an existing pool (the one of a [`PostgresCheckpointer`](crate::PostgresCheckpointer)
    /// on the same database, say) and runs the migrations not yet applied.
    ///
    /// # Errors
    /// [`Error::NoVectorSupport`] with an index; [`Error::Migrate`] when the server rejects a
    /// migration; [`Error::StoreSchemaTooNew`] when a newer LangGraph store migrated the
    /// database; [`Error::Sqlx`] otherwise.
    pub async fn from_pool(self, pool: PgPool) -> Result<PostgresStore> {
        self.refuse_index()?;
        schema::setup(&pool).await?;
        Ok(PostgresStore { pool, ttl: self.ttl, last_sweep: SweepSchedule::default() })
    }

    fn refuse_index(&self) -> Result<()> {
        match self.index {
            Some(_) => Err(Error::NoVectorSupport),
            None => Ok(()),
        }
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
