//! Reading LangGraph's Postgres tables (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`)
//! through [`PostgresCheckpointer`], plus two direct queries the saver has no API for: the list
//! of threads, and the raw rows of a thread whose stored values the saver refuses to decode.

use std::str::FromStr;

use mnemograph_checkpoint::checkpoint::backend::redact;
use mnemograph_checkpoint_postgres::{stored_text, text_from_stored, PgConnectOptions, PostgresCheckpointer};
use sqlx::postgres::PgRow;
use sqlx::Row as _;

use super::sql::{self, LangGraphRow};
use super::thread::ThreadInfo;
use crate::error::{Error, Result};
use crate::snapshot::Snapshot;

/// Threads with their checkpoint count and their newest checkpoint's step and time. The newest
/// checkpoint id is the largest (ids are time-ordered uuid6 strings). A `step` that is not a
/// whole number is left out rather than failing the list.
const THREADS: &str = r#"SELECT t.thread_id, t.n, t.ns, t.latest,
        CASE WHEN jsonb_typeof(c.metadata -> 'step') = 'number'
            AND (c.metadata ->> 'step') ~ '^-?[0-9]{1,18}$'
            THEN (c.metadata ->> 'step')::bigint END AS step,
        c.checkpoint ->> 'ts' AS ts
    FROM (SELECT thread_id, count(*) AS n, count(DISTINCT checkpoint_ns) AS ns,
          max(checkpoint_id COLLATE "C") AS latest FROM checkpoints
          GROUP BY thread_id ORDER BY latest DESC LIMIT $1) AS t
    JOIN checkpoints c ON c.thread_id = t.thread_id AND c.checkpoint_id = t.latest
    ORDER BY t.latest DESC, t.thread_id"#;

/// A PostgreSQL database holding LangGraph's checkpoint tables.
#[derive(Debug, Clone)]
pub struct PostgresSource {
    /// The saver, whose pool the direct queries share.
    pub(super) saver: PostgresCheckpointer,
    /// The URL without its password, for messages.
    url: String,
}

impl PostgresSource {
    /// Connects a small pool.
    ///
    /// # Errors
    /// [`Error::InvalidUrl`] or [`Error::Unreachable`].
    pub async fn connect(url: &str) -> Result<Self> {
        let shown = redact(url);
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| Error::InvalidUrl { url: shown.clone(), source: e.into() })?;
        let pool = sql::pool(options, &shown).await?;
        Ok(Self { saver: PostgresCheckpointer::from_pool(pool), url: shown })
    }

    pub(super) fn backend(&self, source: impl Into<crate::error::BoxError>) -> Error {
        Error::Backend { url: self.url.clone(), source: source.into() }
    }

    /// See [`Source::threads`](super::Source::threads).
    pub(crate) async fn threads(&self, limit: usize) -> Result<Vec<ThreadInfo>> {
        let rows = sqlx::query(THREADS)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(self.saver.pool())
            .await
            .map_err(|e| self.backend(e))?;
        sql::threads(&rows).map_err(|e| self.backend(e))
    }

    /// The rows of a thread read directly, every value decoded on its own. `only` selects one
    /// checkpoint.
    pub(super) async fn raw(
        &self,
        thread_id: &str,
        ns: &str,
        only: Option<&str>,
        limit: Option<usize>,
    ) -> Result<Vec<Snapshot>> {
        let pool = self.saver.pool();
        let (thread, namespace) = (stored_text(thread_id), stored_text(ns));
        let only_clause = if only.is_some() { "AND checkpoint_id = $3" } else { "" };
        let limit_clause = match limit {
            Some(limit) => format!("LIMIT {}", i64::try_from(limit).unwrap_or(i64::MAX)),
            None => String::new(),
        };
        let statement = format!(
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint::text AS checkpoint, \
             metadata::text AS metadata FROM checkpoints \
             WHERE thread_id = $1 AND checkpoint_ns = $2 {only_clause} \
             ORDER BY checkpoint_id DESC {limit_clause}"
        );
        let mut query = sqlx::query(&statement).bind(&*thread).bind(&*namespace);
        if let Some(id) = only {
            query = query.bind(stored_text(id).into_owned());
        }
        let rows = query.fetch_all(pool).await.map_err(|e| self.backend(e))?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let blobs = sqlx::query(
            "SELECT channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = $2",
        )
        .bind(&*thread)
        .bind(&*namespace)
        .fetch_all(pool)
        .await
        .map_err(|e| self.backend(e))?;
        let writes = sqlx::query(
            "SELECT checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes \
             WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY task_path COLLATE \"C\", task_id COLLATE \"C\", idx",
        )
        .bind(&*thread)
        .bind(&*namespace)
        .fetch_all(pool)
        .await
        .map_err(|e| self.backend(e))?;
        Ok(sql::snapshots(thread_id, ns, &rows, &blobs, &writes))
    }
}

/// Text is read checked (the JSON columns are cast to text by the queries); ids, channel names
/// and task ids are stored escaped ([`stored_text`]).
impl LangGraphRow for PgRow {
    fn json_text(&self, column: &str) -> Result<Option<String>, sqlx::Error> {
        self.try_get::<Option<String>, _>(column)
    }

    fn id(&self, column: &str) -> Result<String, sqlx::Error> {
        self.try_get(column).map(text_from_stored)
    }

    sql::decoded_alike!();

    fn idx(&self) -> i64 {
        i64::from(self.try_get::<i32, _>("idx").unwrap_or_default())
    }

    fn unstored(stored: String) -> String {
        text_from_stored(stored)
    }
}
