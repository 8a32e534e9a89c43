//! Reading LangGraph's MySQL tables (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`)
//! through [`MySqlCheckpointer`], plus two direct queries the saver has no API for: the list of
//! threads, and the raw rows of a thread whose stored values the saver refuses to decode.

use std::str::FromStr;

use mnemograph_checkpoint::checkpoint::backend::redact;
use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlConnectOptions};
use sqlx::mysql::MySqlRow;
use sqlx::Row as _;

use super::sql::{self, LangGraphRow};
use super::thread::ThreadInfo;
use crate::error::{Error, Result};
use crate::snapshot::Snapshot;

/// Threads with their checkpoint count and their newest checkpoint's step and time. The newest
/// checkpoint id is the largest (ids are time-ordered uuid6 strings).
const THREADS: &str = "SELECT t.thread_id, t.n, t.ns, t.latest, \
        CAST(JSON_EXTRACT(c.metadata, '$.step') AS SIGNED) AS step, \
        JSON_UNQUOTE(JSON_EXTRACT(c.checkpoint, '$.ts')) AS ts \
    FROM (SELECT thread_id, COUNT(*) AS n, COUNT(DISTINCT checkpoint_ns_hash) AS ns, \
          MAX(checkpoint_id) AS latest FROM checkpoints \
          GROUP BY thread_id ORDER BY latest DESC LIMIT ?) AS t \
    JOIN checkpoints c ON c.thread_id = t.thread_id AND c.checkpoint_id = t.latest \
    ORDER BY t.latest DESC, t.thread_id";

/// A MySQL/MariaDB database holding LangGraph's checkpoint tables.
#[derive(Debug, Clone)]
pub struct MySqlSource {
    /// The saver, whose pool the direct queries share.
    pub(super) saver: MySqlCheckpointer,
    /// The URL without its password, for messages.
    url: String,
}

impl MySqlSource {
    /// Connects a small pool.
    ///
    /// # Errors
    /// [`Error::InvalidUrl`] or [`Error::Unreachable`].
    pub async fn connect(url: &str) -> Result<Self> {
        let shown = redact(url);
        // `mariadb://` is accepted as a synonym; sqlx only knows `mysql://`.
        let normalised = match url.get(..10) {
            Some(scheme) if scheme.eq_ignore_ascii_case("mariadb://") => format!("mysql://{}", &url[10..]),
            _ => url.to_owned(),
        };
        let options = MySqlConnectOptions::from_str(&normalised)
            .map_err(|e| Error::InvalidUrl { url: shown.clone(), source: e.into() })?;
        let pool = sql::pool(options, &shown).await?;
        Ok(Self { saver: MySqlCheckpointer::from_pool(pool), url: shown })
    }

    pub(super) fn backend(&self, source: impl Into<crate::error::BoxError>) -> Error {
        Error::Backend { url: self.url.clone(), source: source.into() }
    }

    /// See [`Source::threads`](super::Source::threads).
    pub(crate) async fn threads(&self, limit: usize) -> Result<Vec<ThreadInfo>> {
        let rows = sqlx::query(THREADS)
            .bind(limit as u64)
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
        let only_clause = if only.is_some() { "AND checkpoint_id = ?" } else { "" };
        let limit_clause = if limit.is_some() { "LIMIT ?" } else { "" };
        let statement = format!(
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints \
             WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5(?)) {only_clause} \
             ORDER BY checkpoint_id DESC {limit_clause}"
        );
        let mut query = sqlx::query(&statement).bind(thread_id).bind(ns);
        if let Some(id) = only {
            query = query.bind(id);
        }
        if let Some(limit) = limit {
            query = query.bind(limit as u64);
        }
        let rows = query.fetch_all(pool).await.map_err(|e| self.backend(e))?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let blobs = sqlx::query(
            "SELECT channel, version, type, `blob` FROM checkpoint_blobs \
             WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5(?))",
        )
        .bind(thread_id)
        .bind(ns)
        .fetch_all(pool)
        .await
        .map_err(|e| self.backend(e))?;
        let writes = sqlx::query(
            "SELECT checkpoint_id, task_id, idx, channel, type, `blob` FROM checkpoint_writes \
             WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5(?))",
        )
        .bind(thread_id)
        .bind(ns)
        .fetch_all(pool)
        .await
        .map_err(|e| self.backend(e))?;
        Ok(sql::snapshots(thread_id, ns, &rows, &blobs, &writes))
    }
}

/// Text columns are read unchecked: MySQL types JSON columns and `JSON_UNQUOTE` results as JSON
/// or LONGTEXT, which sqlx's checked `String` refuses.
impl LangGraphRow for MySqlRow {
    fn json_text(&self, column: &str) -> Result<Option<String>, sqlx::Error> {
        self.try_get_unchecked::<Option<String>, _>(column)
    }

    fn id(&self, column: &str) -> Result<String, sqlx::Error> {
        Ok(self.json_text(column)?.unwrap_or_default())
    }

    sql::decoded_alike!();

    fn idx(&self) -> i64 {
        self.try_get::<i64, _>("idx").unwrap_or_default()
    }
}
