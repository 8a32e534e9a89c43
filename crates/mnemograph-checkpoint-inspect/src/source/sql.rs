//! What the SQL sources share: LangGraph's three tables have the same rows on MySQL and Postgres,
//! so connecting, listing threads and rebuilding raw snapshots from those rows are written once;
//! each source supplies its queries and a [`LangGraphRow`] for its driver's row type.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value as Json;

use super::thread::ThreadInfo;
use crate::decode::Decoded;
use crate::error::{Error, Result};
use crate::snapshot::{RawCheckpoint, Snapshot};

/// How long connecting may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// One row of LangGraph's tables as a SQL driver returns it: the columns the raw reader needs,
/// read the way that server types them.
pub(super) trait LangGraphRow {
    /// A text column (or one that holds JSON); `Err` when it cannot be read.
    fn json_text(&self, column: &str) -> Result<Option<String>, sqlx::Error>;
    /// A text column; `None` when NULL or unreadable.
    fn text(&self, column: &str) -> Option<String> {
        self.json_text(column).ok().flatten()
    }
    /// A non-NULL id column (`thread_id`, the newest `checkpoint_id`), as callers see it.
    fn id(&self, column: &str) -> Result<String, sqlx::Error>;
    /// A non-NULL count.
    fn count(&self, column: &str) -> Result<i64, sqlx::Error>;
    /// A nullable whole number; `None` when NULL or unreadable.
    fn number(&self, column: &str) -> Option<i64>;
    /// A binary column; `None` when NULL or unreadable.
    fn bytes(&self, column: &str) -> Option<Vec<u8>>;
    /// The `idx` of a `checkpoint_writes` row.
    fn idx(&self) -> i64;
    /// A stored text as callers see it: itself, unless the server stores some characters
    /// escaped (Postgres).
    fn unstored(stored: String) -> String {
        stored
    }
}

/// The [`LangGraphRow`] methods whose columns sqlx decodes alike on every driver, for the body of
/// an `impl LangGraphRow` (the trait cannot default them without naming each driver's decoders).
macro_rules! decoded_alike {
    () => {
        fn count(&self, column: &str) -> Result<i64, sqlx::Error> {
            self.try_get(column)
        }

        fn number(&self, column: &str) -> Option<i64> {
            self.try_get::<Option<i64>, _>(column).ok().flatten()
        }

        fn bytes(&self, column: &str) -> Option<Vec<u8>> {
            self.try_get(column).ok().flatten()
        }
    };
}
pub(super) use decoded_alike;

/// `(channel, version)` → `(type, blob)` of a thread's `checkpoint_blobs` rows.
type BlobRows = HashMap<(String, String), (String, Option<Vec<u8>>)>;

/// A small pool (the tool runs a few queries, one at a time) on `options`, after one plain
/// connection: a pool retries until its timeout and then reports only "pool timed out", while
/// this fails at once with the driver's reason (refused, access denied, unknown database).
/// `shown` is the URL without its password.
pub(super) async fn pool<DB: sqlx::Database>(
    options: <DB::Connection as sqlx::Connection>::Options,
    shown: &str,
) -> Result<sqlx::Pool<DB>> {
    let unreachable = |source: crate::error::BoxError| Error::Unreachable { url: shown.to_owned(), source };
    let probe = <DB::Connection as sqlx::Connection>::connect_with(&options);
    match tokio::time::timeout(CONNECT_TIMEOUT, probe).await {
        Ok(Ok(conn)) => drop(sqlx::Connection::close(conn).await),
        Ok(Err(e)) => return Err(unreachable(e.into())),
        Err(elapsed) => return Err(unreachable(elapsed.into())),
    }
    let pool = sqlx::pool::PoolOptions::<DB>::new().max_connections(2).acquire_timeout(CONNECT_TIMEOUT);
    Ok(pool.connect_lazy_with(options))
}

/// The [`ThreadInfo`]s of the rows of a source's thread query (columns `thread_id`, `n`, `ns`,
/// `latest`, `step`, `ts`, newest first).
pub(super) fn threads<R: LangGraphRow>(rows: &[R]) -> Result<Vec<ThreadInfo>, sqlx::Error> {
    let mut out: Vec<ThreadInfo> = Vec::with_capacity(rows.len());
    for row in rows {
        let thread_id = row.id("thread_id")?;
        // Subgraph namespaces may share the newest id; one line per thread.
        if out.iter().any(|t| t.thread_id == thread_id) {
            continue;
        }
        let count = row.count("n")?;
        let namespaces = row.count("ns")?;
        out.push(ThreadInfo {
            thread_id,
            checkpoints: u64::try_from(count).unwrap_or(0),
            namespaces: u64::try_from(namespaces).unwrap_or(0),
            latest_id: row.id("latest")?,
            latest_step: row.number("step"),
            latest_ts: row.text("ts"),
        });
    }
    Ok(out)
}

/// The snapshots of one thread's namespace from its rows read directly, every value decoded on
/// its own: `checkpoints` (`checkpoint_id`, `parent_checkpoint_id`, `checkpoint`, `metadata`)
/// and all of the namespace's `blobs` (`channel`, `version`, `type`, `blob`) and `writes`
/// (`checkpoint_id`, `task_id`, `idx`, `channel`, `type`, `blob`), writes in the order given.
pub(super) fn snapshots<R: LangGraphRow>(
    thread_id: &str,
    ns: &str,
    checkpoints: &[R],
    blobs: &[R],
    writes: &[R],
) -> Vec<Snapshot> {
    let mut blob_rows: BlobRows = HashMap::new();
    for row in blobs {
        if let (Some(channel), Some(version)) = (row.text("channel"), row.text("version")) {
            let kind = row.text("type").unwrap_or_else(|| "null".to_owned());
            blob_rows.insert((channel, version), (kind, row.bytes("blob")));
        }
    }
    let mut out = Vec::with_capacity(checkpoints.len());
    for row in checkpoints {
        let checkpoint_id = row.text("checkpoint_id").unwrap_or_default();
        let mut raw = RawCheckpoint {
            thread_id: thread_id.to_owned(),
            checkpoint_ns: ns.to_owned(),
            parent_id: row.text("parent_checkpoint_id").map(R::unstored),
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
            match blob_rows.get(&(channel.clone(), version)) {
                Some((kind, _)) if kind == "empty" => {}
                Some((kind, bytes)) => {
                    let bytes = bytes.as_deref().unwrap_or_default();
                    raw.blobs.push((R::unstored(channel), Decoded::from_typed(kind, bytes)));
                }
                // Inline in the document, or a channel without a value.
                None => {}
            }
        }
        for w in writes.iter().filter(|w| w.text("checkpoint_id").as_ref() == Some(&checkpoint_id)) {
            let kind = w.text("type").unwrap_or_else(|| "null".to_owned());
            let bytes = w.bytes("blob");
            raw.writes.push((
                w.text("task_id").map(R::unstored).unwrap_or_default(),
                w.idx(),
                w.text("channel").map(R::unstored).unwrap_or_default(),
                Decoded::from_typed(&kind, bytes.as_deref().unwrap_or_default()),
            ));
        }
        raw.checkpoint_id = R::unstored(checkpoint_id);
        out.push(Snapshot::from_raw(raw));
    }
    out
}

/// A JSON column parsed, floats as the exact doubles stored; a problem noted (and `null`
/// returned) when it is missing or not JSON.
fn json_column<R: LangGraphRow>(row: &R, column: &str, problems: &mut Vec<String>) -> Json {
    match row.json_text(column) {
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
