//! [`MySqlShallowCheckpointer`]: LangGraph's shallow MySQL saver, the latest checkpoint only.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use graph_core::checkpoint::serde::{checkpoint_to_json, dumps_typed, metadata_to_json};
use graph_core::checkpoint::{
    ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata,
    CheckpointTuple, Checkpointer, ListOptions,
};
use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use sqlx::{MySqlConnection, MySqlPool};

use crate::error::{backend, Error, Result};
use crate::exact::same;
use crate::saver::WriterOptions;
use crate::sql::{self, Layout};
use crate::writers::Writers;
use crate::{latest, migrate, pyjson, saver, write};

/// A [`Checkpointer`] that keeps only the latest checkpoint of each thread and namespace, in the
/// tables and row format of LangGraph's `ShallowPyMySQLSaver` (deprecated upstream, kept for
/// databases that use it).
///
/// Each `put` overwrites the thread's checkpoint, replaces the blobs of the channels that changed
/// (one row per channel, not per version) and drops pending writes of older checkpoints. So there
/// is no history: `list` returns at most one checkpoint per thread and namespace, `parent_config`
/// is always `None`, and [`get_tuple`](Checkpointer::get_tuple) with a `checkpoint_id` other than
/// the latest finds nothing (LangGraph's shallow saver returns the latest instead; a caller asking
/// for a checkpoint that was overwritten should learn that it is gone).
///
/// Its tables have the same names as [`MySqlCheckpointer`](crate::MySqlCheckpointer)'s, with
/// another layout, so the two need separate databases; [`setup`](Self::setup) refuses a database
/// holding the full saver's tables.
///
/// # Example
/// ```no_run
/// # async fn demo() -> Result<(), checkpoint_mysql::Error> {
/// use checkpoint_mysql::MySqlShallowCheckpointer;
///
/// let saver = MySqlShallowCheckpointer::connect("mysql://app:secret@db.internal/app_latest").await?;
/// saver.setup().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MySqlShallowCheckpointer {
    /// Shared by clones.
    pool: MySqlPool,
    /// Connections kept for put transactions (see [`crate::writers`]).
    writers: Arc<Writers>,
}

impl fmt::Debug for MySqlShallowCheckpointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the pool's own Debug, which prints the connect options and so the password.
        f.debug_struct("MySqlShallowCheckpointer").field("connections", &self.pool.size()).finish()
    }
}

/// Drops writes of checkpoints that are neither the new one nor its parent. The thread id is
/// compared exactly (see [`crate::exact`]), so bound twice.
const DELETE_OLD_WRITES: &str = concat!(
    "DELETE FROM checkpoint_writes WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND checkpoint_id NOT IN (?, ?)"
);

/// The thread ids stored in the namespace's row under the column's collation, locked. The
/// primary key is `(thread_id, checkpoint_ns_hash)` in the database's collation, so a row of
/// `User-1` is also the row of `user-1` and `user-1 `: the upserts would overwrite that other
/// thread's checkpoint and blobs.
const SAME_KEY: &str = "SELECT thread_id FROM checkpoints \
    WHERE thread_id = ? AND checkpoint_ns_hash = ? FOR UPDATE";

/// One row per channel: the latest value replaces the previous one.
const UPSERT_BLOBS: &str = "INSERT INTO checkpoint_blobs \
    (thread_id, checkpoint_ns, checkpoint_ns_hash, channel, type, `blob`) VALUES ";
const UPSERT_BLOBS_TAIL: &str = " /*!50700 AS new*/ ON DUPLICATE KEY UPDATE \
    type = /*!50700 new.type*//*M! VALUE(type)*/, \
    `blob` = /*!50700 new.`blob`*//*M! VALUE(`blob`)*/";

/// The thread's one checkpoint row (no id column: the id is the document's `$.id`).
const UPSERT_CHECKPOINT: &str = "INSERT INTO checkpoints \
    (thread_id, checkpoint_ns, checkpoint_ns_hash, checkpoint, metadata) \
    VALUES (?, ?, ?, ?, ?) /*!50700 AS new*/ \
    ON DUPLICATE KEY UPDATE \
    checkpoint = /*!50700 new.checkpoint*//*M! VALUE(checkpoint)*/, \
    metadata = /*!50700 new.metadata*//*M! VALUE(metadata)*/";

impl MySqlShallowCheckpointer {
    /// Connects a pool to `url`; the URL parameters are those of
    /// [`MySqlCheckpointer::connect`](crate::MySqlCheckpointer::connect).
    ///
    /// # Errors
    /// [`Error::Sqlx`] for a malformed URL or parameter, or when the server cannot be reached.
    pub async fn connect(url: &str) -> Result<Self> {
        let connect = MySqlConnectOptions::from_str(url)?;
        let options = saver::url_options(url)?;
        let mut saver = Self::connect_with(connect, options.pool).await?;
        saver.writers = options.writers.writers(&saver.pool);
        Ok(saver)
    }

    /// Connects a pool built from explicit options.
    ///
    /// # Errors
    /// [`Error::Sqlx`] when the server cannot be reached.
    pub async fn connect_with(connect: MySqlConnectOptions, pool: MySqlPoolOptions) -> Result<Self> {
        Ok(Self::from_pool(pool.connect_with(connect).await?))
    }

    /// Uses an existing pool.
    pub fn from_pool(pool: MySqlPool) -> Self {
        let writers = WriterOptions::default().writers(&pool);
        Self { pool, writers }
    }

    /// How many connections this saver keeps open for its put transactions (default 4; 0 keeps
    /// none), beside the pool's; see
    /// [`MySqlCheckpointer::with_write_connections`](crate::MySqlCheckpointer::with_write_connections).
    #[must_use]
    pub fn with_write_connections(mut self, count: usize) -> Self {
        self.writers = WriterOptions { count, ..WriterOptions::default() }.writers(&self.pool);
        self
    }

    /// The connection pool.
    pub fn pool(&self) -> &MySqlPool {
        &self.pool
    }

    /// Creates or upgrades the tables: the shallow saver's 11 migrations, recorded in
    /// `checkpoint_migrations` like the Python `setup()` does. Returns how many were applied. The
    /// notes of [`MySqlCheckpointer::setup`](crate::MySqlCheckpointer::setup) (lock, non-transactional
    /// DDL) apply.
    ///
    /// # Errors
    /// [`Error::Schema`] when the database holds the full saver's tables (nothing is changed),
    /// otherwise as [`MySqlCheckpointer::setup`](crate::MySqlCheckpointer::setup).
    pub async fn setup(&self) -> Result<usize> {
        migrate::run(&self.pool, migrate::Layout::Shallow).await
    }

    async fn put_inner(
        &self,
        config: &CheckpointConfig,
        checkpoint: &Checkpoint,
        metadata: &CheckpointMetadata,
        new_versions: &ChannelVersions,
        expect_latest: bool,
    ) -> Result<(), CheckpointError> {
        write::check_address(config)?;
        write::fits("checkpoint_id", &checkpoint.id, write::ID_LEN)?;
        for channel in checkpoint.channel_versions.keys() {
            write::fits("channel", channel, write::ID_LEN)?;
        }
        let (mut document, _) = checkpoint_to_json(checkpoint).map_err(Error::from)?;
        // Every value lives in the blob table here, primitives included, as in LangGraph's
        // shallow saver: the document carries versions only.
        document.remove("channel_values");
        let mut blobs = Vec::with_capacity(new_versions.len());
        for channel in new_versions.keys() {
            // A channel without a value gets LangGraph's `empty` row, which reads back as absent.
            let (kind, bytes) = match checkpoint.channel_values.get(channel) {
                Some(value) => {
                    let (kind, bytes) = dumps_typed(value).map_err(Error::from)?;
                    (kind, Some(bytes))
                }
                None => ("empty".to_owned(), None),
            };
            write::fits("type", &kind, write::ID_LEN)?;
            blobs.push((&**channel, kind, bytes));
        }
        let document = pyjson::dumps(&document).map_err(|e| CheckpointError::Invalid(e.to_string()))?;
        let metadata = pyjson::dumps(&metadata_to_json(metadata))
            .map_err(|e| CheckpointError::Invalid(e.to_string()))?;
        let hash = write::ns_hash(&config.checkpoint_ns);

        let rows = (config, hash, checkpoint.id.as_str(), blobs, document, metadata);
        latest::put_transaction(
            &self.writers,
            Layout::Shallow,
            config,
            expect_latest,
            None,
            &rows,
            |tx, rows| {
                let (config, hash, id, blobs, document, metadata) = rows;
                Box::pin(async move {
                    // Prepared statements, one round trip each: the shallow saver keeps its
                    // statement-by-statement transaction.
                    let tx = tx.connection().await.map_err(backend)?;
                    refuse_colliding_thread(tx, config, hash).await?;
                    sqlx::query(DELETE_OLD_WRITES)
                        .bind(&config.thread_id)
                        .bind(&config.thread_id)
                        .bind(&hash[..])
                        .bind(*id)
                        .bind(config.checkpoint_id.as_deref().unwrap_or(""))
                        .execute(&mut *tx)
                        .await
                        .map_err(backend)?;
                    upsert_blobs(tx, config, hash, blobs).await.map_err(backend)?;
                    sqlx::query(UPSERT_CHECKPOINT)
                        .bind(&config.thread_id)
                        .bind(&config.checkpoint_ns)
                        .bind(&hash[..])
                        .bind(document.as_str())
                        .bind(metadata.as_str())
                        .execute(&mut *tx)
                        .await
                        .map_err(backend)?;
                    Ok(())
                })
            },
        )
        .await
    }
}

/// `Err(Invalid)` when the namespace's row belongs to a thread whose id differs from
/// `config.thread_id` but is equal to it under the column's collation (see [`SAME_KEY`]).
async fn refuse_colliding_thread(
    tx: &mut MySqlConnection,
    config: &CheckpointConfig,
    hash: &[u8; 16],
) -> Result<(), CheckpointError> {
    let stored: Vec<String> = sqlx::query_scalar(SAME_KEY)
        .bind(&config.thread_id)
        .bind(&hash[..])
        .fetch_all(&mut *tx)
        .await
        .map_err(backend)?;
    match stored.into_iter().find(|other| *other != config.thread_id) {
        Some(other) => Err(CheckpointError::Invalid(format!(
            "thread id `{}` cannot be stored next to the thread `{other}`: the database's collation \
             does not tell them apart, and the shallow tables key a checkpoint by thread id",
            config.thread_id
        ))),
        None => Ok(()),
    }
}

/// `(channel, type, blob)` rows, upserted in as few statements as fit.
async fn upsert_blobs(
    tx: &mut MySqlConnection,
    config: &CheckpointConfig,
    hash: &[u8; 16],
    blobs: &[(&str, String, Option<Vec<u8>>)],
) -> Result<(), sqlx::Error> {
    let size = |b: &(&str, String, Option<Vec<u8>>)| b.2.as_ref().map_or(0, Vec::len);
    for batch in write::batches(blobs, size, write::MAX_PLACEHOLDERS / 6) {
        let text = sql::multi_row(UPSERT_BLOBS, "(?, ?, ?, ?, ?, ?)", batch.len(), UPSERT_BLOBS_TAIL);
        let mut query = sqlx::query(&text);
        for (channel, kind, bytes) in batch {
            query = query
                .bind(&config.thread_id)
                .bind(&config.checkpoint_ns)
                .bind(&hash[..])
                .bind(*channel)
                .bind(kind)
                .bind(bytes.as_deref());
        }
        query.execute(&mut *tx).await?;
    }
    Ok(())
}

impl Checkpointer for MySqlShallowCheckpointer {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        saver::get_tuple(&self.pool, Layout::Shallow, config).await
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        saver::list(&self.pool, Layout::Shallow, config, options).await
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.put_inner(config, &checkpoint, &metadata, &new_versions, false).await?;
        Ok(config.clone().with_checkpoint_id(checkpoint.id))
    }

    /// Atomic: the thread's one checkpoint row is locked and compared inside the put
    /// transaction. The parent is compared with the checkpoint kept, which is the latest.
    async fn put_expecting_latest(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.put_inner(config, &checkpoint, &metadata, &new_versions, true).await?;
        Ok(config.clone().with_checkpoint_id(checkpoint.id))
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        write::put_writes(&self.pool, config, &writes, task_id, task_path).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        write::delete_thread(&self.pool, thread_id).await
    }
}
