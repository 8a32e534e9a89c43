//! Reading LangGraph's MySQL tables (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`)
//! through [`MySqlCheckpointer`], plus two direct queries the saver has no API for: the list of
//! threads, and the raw rows of a thread whose stored values the saver refuses to decode.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use mnemograph_checkpoint_mysql::{redact, MySqlCheckpointer, MySqlConnectOptions, MySqlPoolOptions};
use serde_json::Value as Json;
use sqlx::mysql::{MySqlConnection, MySqlRow};
use sqlx::{Connection as _, Row as _};

use super::thread::ThreadInfo;
use crate::decode::Decoded;
use crate::error::{Error, Result};
use crate::snapshot::{RawCheckpoint, Snapshot};

/// How long connecting may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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

/// `(channel, version)` → `(type, blob)` of a thread's `checkpoint_blobs` rows.
type BlobRows = HashMap<(String, String), (String, Option<Vec<u8>>)>;

/// A MySQL/MariaDB database holding LangGraph's checkpoint tables.
#[derive(Debug, Clone)]
pub struct MySqlSource {
    /// The saver, whose pool the direct queries share.
    pub(super) saver: MySqlCheckpointer,
    /// The URL without its password, for messages.
    url: String,
}

impl MySqlSource {
    /// Connects a small pool (the tool runs a few queries, one at a time).
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
        // One plain connection first: a pool retries until its timeout and then reports only
        // "pool timed out", while this fails at once with the driver's reason (refused, access
        // denied, unknown database).
        let probe = MySqlConnection::connect_with(&options);
        match tokio::time::timeout(CONNECT_TIMEOUT, probe).await {
            Ok(Ok(conn)) => drop(conn.close().await),
            Ok(Err(e)) => return Err(Error::Unreachable { url: shown, source: e.into() }),
            Err(elapsed) => return Err(Error::Unreachable { url: shown, source: elapsed.into() }),
        }
        let pool = MySqlPoolOptions::new()
            .max_connections(2)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(options);
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
        let mut out: Vec<ThreadInfo> = Vec::with_capacity(rows.len());
        for row in &rows {
            let thread_id = text(row, "thread_id").map_err(|e| self.backend(e))?.unwrap_or_default();
            // Subgraph namespaces may share the newest id; one line per thread.
            if out.iter().any(|t| t.thread_id == thread_id) {
                continue;
            }
            let count: i64 = row.try_get("n").map_err(|e| self.backend(e))?;
            let namespaces: i64 = row.try_get("ns").map_err(|e| self.backend(e))?;
            out.push(ThreadInfo {
                thread_id,
                checkpoints: u64::try_from(count).unwrap_or(0),
                namespaces: u64::try_from(namespaces).unwrap_or(0),
                latest_id: text(row, "latest").map_err(|e| self.backend(e))?.unwrap_or_default(),
                latest_step: row.try_get::<Option<i64>, _>("step").ok().flatten(),
                latest_ts: text(row, "ts").ok().flatten(),
            });
        }
        Ok(out)
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
        let sql = format!(
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint, metadata FROM checkpoints \
             WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5(?)) {only_clause} \
             ORDER BY checkpoint_id DESC {limit_clause}"
        );
        let mut query = sqlx::query(&sql).bind(thread_id).bind(ns);
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
        let blob_rows = sqlx::query(
            "SELECT channel, version, type, `blob` FROM checkpoint_blobs \
             WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5(?))",
        )
        .bind(thread_id)
        .bind(ns)
        .fetch_all(pool)
        .await
        .map_err(|e| self.backend(e))?;
        let mut blobs: BlobRows = HashMap::new();
        for row in &blob_rows {
            let key = (text(row, "channel").ok().flatten(), text(row, "version").ok().flatten());
            if let (Some(channel), Some(version)) = key {
                let kind = text(row, "type").ok().flatten().unwrap_or_else(|| "null".to_owned());
                blobs.insert((channel, version), (kind, row.try_get("blob").ok().flatten()));
            }
        }
        let write_rows = sqlx::query(
            "SELECT checkpoint_id, task_id, idx, channel, type, `blob` FROM checkpoint_writes \
             WHERE thread_id = ? AND checkpoint_ns_hash = UNHEX(MD5(?))",
        )
        .bind(thread_id)
        .bind(ns)
        .fetch_all(pool)
        .await
        .map_err(|e| self.backend(e))?;

        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let checkpoint_id = text(row, "checkpoint_id").ok().flatten().unwrap_or_default();
            let mut raw = RawCheckpoint {
                thread_id: thread_id.to_owned(),
                checkpoint_ns: ns.to_owned(),
                parent_id: text(row, "parent_checkpoint_id").ok().flatten(),
                ..RawCheckpoint::default()
            };
            raw.document = json_column(row, "checkpoint", &mut raw.problems);
            raw.metadata = json_column(row, "metadata", &mut raw.problems);
            let versions = raw.document.get("channel_versions").and_then(Json::as_object).cloned();
            for (channel, version) in versions.unwrap_or_default() {
                let version = match version {
                    Json::String(s) => s,
                    other => other.to_string(),
                };
                match blobs.get(&(channel.clone(), version)) {
                    Some((kind, _)) if kind == "empty" => {}
                    Some((kind, bytes)) => {
                        let bytes = bytes.as_deref().unwrap_or_default();
                        raw.blobs.push((channel, Decoded::from_typed(kind, bytes)));
                    }
                    // Inline in the document, or a channel without a value.
                    None => {}
                }
            }
            for w in write_rows
                .iter()
                .filter(|w| text(w, "checkpoint_id").ok().flatten().as_ref() == Some(&checkpoint_id))
            {
                let kind = text(w, "type").ok().flatten().unwrap_or_else(|| "null".to_owned());
                let bytes: Option<Vec<u8>> = w.try_get("blob").ok().flatten();
                raw.writes.push((
                    text(w, "task_id").ok().flatten().unwrap_or_default(),
                    w.try_get::<i64, _>("idx").unwrap_or_default(),
                    text(w, "channel").ok().flatten().unwrap_or_default(),
                    Decoded::from_typed(&kind, bytes.as_deref().unwrap_or_default()),
                ));
            }
            raw.checkpoint_id = checkpoint_id;
            out.push(Snapshot::from_raw(raw));
        }
        Ok(out)
    }
}

/// A text column, whatever type the server reports for it (MySQL types JSON columns and
/// `JSON_UNQUOTE` results as JSON or LONGTEXT, which sqlx's checked `String` refuses).
fn text(row: &MySqlRow, column: &str) -> Result<Option<String>, sqlx::Error> {
    row.try_get_unchecked::<Option<String>, _>(column)
}

/// A JSON column parsed, floats as the exact doubles stored; a problem noted (and `null`
/// returned) when it is missing or not JSON.
fn json_column(row: &MySqlRow, column: &str, problems: &mut Vec<String>) -> Json {
    match text(row, column) {
        Ok(Some(t)) => {
            mnemograph_checkpoint::checkpoint::serde::parse_json(t.as_bytes()).unwrap_or_else(|e| {
                problems.push(format!("`{column}` is not JSON: {e}"));
                Json::Null
            })
        }
        Ok(None) => {
            problems.push(format!("`{column}` is NULL"));
            Json::Null
        }
        Err(e) => {
            problems.push(format!("`{column}` cannot be read: {e}"));
            Json::Null
        }
    }
}
