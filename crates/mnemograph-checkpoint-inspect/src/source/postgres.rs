//! Reading LangGraph's Postgres tables (`checkpoints`, `checkpoint_blobs`, `checkpoint_writes`)
//! through [`PostgresCheckpointer`], plus two direct queries the saver has no API for: the list
//! of threads, and the raw rows of a thread whose stored values the saver refuses to decode.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use mnemograph_checkpoint_mysql::redact;
use mnemograph_checkpoint_postgres::{
    stored_text, text_from_stored, PgConnectOptions, PgPoolOptions, PostgresCheckpointer,
};
use serde_json::Value as Json;
use sqlx::postgres::{PgConnection, PgRow};
use sqlx::{Connection as _, Row as _};

use super::thread::ThreadInfo;
use crate::decode::Decoded;
use crate::error::{Error, Result};
use crate::snapshot::{RawCheckpoint, Snapshot};

/// How long connecting may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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

/// `(channel, version)` → `(type, blob)` of a thread's `checkpoint_blobs` rows.
type BlobRows = HashMap<(String, String), (String, Option<Vec<u8>>)>;

/// A PostgreSQL database holding LangGraph's checkpoint tables.
#[derive(Debug, Clone)]
pub struct PostgresSource {
    /// The saver, whose pool the direct queries share.
    pub(super) saver: PostgresCheckpointer,
    /// The URL without its password, for messages.
    url: String,
}

impl PostgresSource {
    /// Connects a small pool (the tool runs a few queries, one at a time).
    ///
    /// # Errors
    /// [`Error::InvalidUrl`] or [`Error::Unreachable`].
    pub async fn connect(url: &str) -> Result<Self> {
        let shown = redact(url);
        let options = PgConnectOptions::from_str(url)
            .map_err(|e| Error::InvalidUrl { url: shown.clone(), source: e.into() })?;
        // One plain connection first: a pool retries until its timeout and then reports only
        // "pool timed out", while this fails at once with the driver's reason.
        let probe = PgConnection::connect_with(&options);
        match tokio::time::timeout(CONNECT_TIMEOUT, probe).await {
            Ok(Ok(conn)) => drop(conn.close().await),
            Ok(Err(e)) => return Err(Error::Unreachable { url: shown, source: e.into() }),
            Err(elapsed) => return Err(Error::Unreachable { url: shown, source: elapsed.into() }),
        }
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .acquire_timeout(CONNECT_TIMEOUT)
            .connect_lazy_with(options);
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
        let mut out: Vec<ThreadInfo> = Vec::with_capacity(rows.len());
        for row in &rows {
            let thread_id = text_from_stored(row.try_get("thread_id").map_err(|e| self.backend(e))?);
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
                latest_id: text_from_stored(row.try_get("latest").map_err(|e| self.backend(e))?),
                latest_step: row.try_get::<Option<i64>, _>("step").ok().flatten(),
                latest_ts: row.try_get::<Option<String>, _>("ts").ok().flatten(),
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
        let (thread, namespace) = (stored_text(thread_id), stored_text(ns));
        let only_clause = if only.is_some() { "AND checkpoint_id = $3" } else { "" };
        let limit_clause = match limit {
            Some(limit) => format!("LIMIT {}", i64::try_from(limit).unwrap_or(i64::MAX)),
            None => String::new(),
        };
        let sql = format!(
            "SELECT checkpoint_id, parent_checkpoint_id, checkpoint::text AS checkpoint, \
             metadata::text AS metadata FROM checkpoints \
             WHERE thread_id = $1 AND checkpoint_ns = $2 {only_clause} \
             ORDER BY checkpoint_id DESC {limit_clause}"
        );
        let mut query = sqlx::query(&sql).bind(&*thread).bind(&*namespace);
        if let Some(id) = only {
            query = query.bind(stored_text(id).into_owned());
        }
        let rows = query.fetch_all(pool).await.map_err(|e| self.backend(e))?;
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        let blob_rows = sqlx::query(
            "SELECT channel, version, type, blob FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns = $2",
        )
        .bind(&*thread)
        .bind(&*namespace)
        .fetch_all(pool)
        .await
        .map_err(|e| self.backend(e))?;
        let mut blobs: BlobRows = HashMap::new();
        for row in &blob_rows {
            let key = (text(row, "channel"), text(row, "version"));
            if let (Some(channel), Some(version)) = key {
                let kind = text(row, "type").unwrap_or_else(|| "null".to_owned());
                blobs.insert((channel, version), (kind, row.try_get("blob").ok().flatten()));
            }
        }
        let write_rows = sqlx::query(
            "SELECT checkpoint_id, task_id, idx, channel, type, blob FROM checkpoint_writes \
             WHERE thread_id = $1 AND checkpoint_ns = $2 ORDER BY task_path COLLATE \"C\", task_id COLLATE \"C\", idx",
        )
        .bind(&*thread)
        .bind(&*namespace)
        .fetch_all(pool)
        .await
        .map_err(|e| self.backend(e))?;

        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let checkpoint_id = text(row, "checkpoint_id").unwrap_or_default();
            let mut raw = RawCheckpoint {
                thread_id: thread_id.to_owned(),
                checkpoint_ns: ns.to_owned(),
                parent_id: text(row, "parent_checkpoint_id").map(text_from_stored),
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
                        raw.blobs.push((text_from_stored(channel), Decoded::from_typed(kind, bytes)));
                    }
                    // Inline in the document, or a channel without a value.
                    None => {}
                }
            }
            for w in write_rows.iter().filter(|w| text(w, "checkpoint_id").as_ref() == Some(&checkpoint_id)) {
                let kind = text(w, "type").unwrap_or_else(|| "null".to_owned());
                let bytes: Option<Vec<u8>> = w.try_get("blob").ok().flatten();
                raw.writes.push((
                    text(w, "task_id").map(text_from_stored).unwrap_or_default(),
                    i64::from(w.try_get::<i32, _>("idx").unwrap_or_default()),
                    text(w, "channel").map(text_from_stored).unwrap_or_default(),
                    Decoded::from_typed(&kind, bytes.as_deref().unwrap_or_default()),
                ));
            }
            raw.checkpoint_id = text_from_stored(checkpoint_id);
            out.push(Snapshot::from_raw(raw));
        }
        Ok(out)
    }
}

/// A text column; `None` when NULL or unreadable.
fn text(row: &PgRow, column: &str) -> Option<String> {
    row.try_get::<Option<String>, _>(column).ok().flatten()
}

/// A JSON column (read as text) parsed, floats as the exact doubles stored; a problem noted (and
/// `null` returned) when it is missing or not JSON.
fn json_column(row: &PgRow, column: &str, problems: &mut Vec<String>) -> Json {
    match row.try_get::<Option<String>, _>(column) {
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
