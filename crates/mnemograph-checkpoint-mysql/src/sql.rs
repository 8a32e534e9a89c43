//! The statements of the full saver, in LangGraph's shapes.
//!
//! MySQL/MariaDB differences are written as executable comments, so one text serves both servers
//! and no round trip is spent asking which one this is: `/*!50700 …*/` is run by MySQL only,
//! `/*M! …*/` by MariaDB only.
//!
//! All statements bind their values (`?`); the only text spliced in is fixed SQL (values are
//! written into a text only as hex literals, by [`crate::statement`]).

use std::fmt::Write as _;

use crate::exact::{same, same_columns};
use crate::statement::{Bind, Statement};

/// One row of `checkpoint_blobs`: thread, ns, ns hash, channel, version, type, blob.
pub(crate) const BLOB_ROW: &str = "(?, ?, ?, ?, ?, ?, ?)";
/// Channel values not yet stored for their version; an existing `(channel, version)` is kept.
pub(crate) const INSERT_BLOBS: &str = "INSERT IGNORE INTO checkpoint_blobs \
    (thread_id, checkpoint_ns, checkpoint_ns_hash, channel, version, type, `blob`) VALUES ";

/// The checkpoint row; saving the same id again replaces document and metadata (MySQL 8.0.19+
/// needs the row alias, `VALUES()` being deprecated; MariaDB has no alias but `VALUE()`).
pub(crate) const UPSERT_CHECKPOINT: &str = "INSERT INTO checkpoints \
    (thread_id, checkpoint_ns, checkpoint_ns_hash, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
    VALUES (?, ?, ?, ?, ?, ?, ?) /*!50700 AS new*/ \
    ON DUPLICATE KEY UPDATE \
    checkpoint = /*!50700 new.checkpoint*//*M! VALUE(checkpoint)*/, \
    metadata = /*!50700 new.metadata*//*M! VALUE(metadata)*/";

/// [`UPSERT_CHECKPOINT`] up to its rows, for [`multi_row`] with [`CHECKPOINT_ROW`] and
/// [`UPSERT_CHECKPOINTS_TAIL`]: several checkpoint rows in one statement.
pub(crate) const UPSERT_CHECKPOINTS: &str = "INSERT INTO checkpoints \
    (thread_id, checkpoint_ns, checkpoint_ns_hash, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
    VALUES ";

/// One row of `checkpoints`: thread, ns, ns hash, checkpoint, parent, document, metadata.
pub(crate) const CHECKPOINT_ROW: &str = "(?, ?, ?, ?, ?, ?, ?)";

/// What follows the rows of [`UPSERT_CHECKPOINTS`].
pub(crate) const UPSERT_CHECKPOINTS_TAIL: &str = " /*!50700 AS new*/ \
    ON DUPLICATE KEY UPDATE \
    checkpoint = /*!50700 new.checkpoint*//*M! VALUE(checkpoint)*/, \
    metadata = /*!50700 new.metadata*//*M! VALUE(metadata)*/";

/// One row of `checkpoint_writes`: thread, ns, ns hash, checkpoint, task, task path, idx, channel,
/// type, blob.
pub(crate) const WRITE_ROW: &str = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
const WRITE_COLUMNS: &str =
    "(thread_id, checkpoint_ns, checkpoint_ns_hash, checkpoint_id, task_id, task_path, idx, channel, type, `blob`)";
/// Regular writes: the first value saved for a `(task_id, idx)` wins, so a retried task cannot
/// change what an earlier attempt recorded.
pub(crate) fn insert_writes() -> String {
    format!("INSERT IGNORE INTO checkpoint_writes {WRITE_COLUMNS} VALUES ")
}
/// Special writes (`__error__`, `__interrupt__`, ...): the latest value wins.
pub(crate) fn upsert_writes() -> String {
    format!("INSERT INTO checkpoint_writes {WRITE_COLUMNS} VALUES ")
}
/// What follows the rows of [`upsert_writes`].
pub(crate) const UPSERT_WRITES_TAIL: &str = " /*!50700 AS new*/ ON DUPLICATE KEY UPDATE \
    channel = /*!50700 new.channel*//*M! VALUE(channel)*/, \
    type = /*!50700 new.type*//*M! VALUE(type)*/, \
    `blob` = /*!50700 new.`blob`*//*M! VALUE(`blob`)*/";

/// `prefix` followed by `rows` copies of `row`, comma-separated, then `tail`.
pub(crate) fn multi_row(prefix: &str, row: &str, rows: usize, tail: &str) -> String {
    let mut sql = String::with_capacity(prefix.len() + rows * (row.len() + 2) + tail.len());
    sql.push_str(prefix);
    for i in 0..rows {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str(row);
    }
    sql.push_str(tail);
    sql
}

/// Which saver's tables a statement reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Every checkpoint, blobs per `(channel, version)`.
    Full,
    /// LangGraph's shallow saver: one checkpoint per thread and namespace, without a
    /// `checkpoint_id` or `parent_checkpoint_id` column (the id is the document's `$.id`), and one
    /// blob per channel.
    Shallow,
}

impl Layout {
    /// The checkpoint id of a `checkpoints` row.
    fn id(self) -> &'static str {
        match self {
            Layout::Full => "checkpoint_id",
            Layout::Shallow => "JSON_UNQUOTE(JSON_EXTRACT(checkpoint, '$.id'))",
        }
    }
    /// The parent id of a `checkpoints` row (the shallow table keeps none).
    fn parent(self) -> &'static str {
        match self {
            Layout::Full => "parent_checkpoint_id",
            Layout::Shallow => "CAST(NULL AS CHAR(150))",
        }
    }
    /// The channels of a `page` row's document as the table `channels` (`channel`, and in the
    /// full layout `version`), for the blob lookup.
    ///
    /// The names come from `JSON_KEYS` and the versions from `$.channel_versions.*`, paired by
    /// position: both list the object's members in the same order (the text's on MariaDB, the
    /// binary form's on MySQL). A JSON path per channel name cannot be used: MariaDB matches path
    /// keys against the document's keys *as written*, and Python's `json.dumps` writes every
    /// non-ASCII character as `\uXXXX`, so a channel named `中文`, `é`, `a"b` or `a\b` would find
    /// no version and silently read back without its value.
    fn channels(self) -> &'static str {
        match self {
            Layout::Full => {
                "JSON_TABLE(JSON_KEYS(page.checkpoint, '$.channel_versions'), '$[*]' COLUMNS ( \
                    i FOR ORDINALITY, \
                    channel VARCHAR(150) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$')) AS channels \
                JOIN JSON_TABLE(JSON_EXTRACT(page.checkpoint, '$.channel_versions.*'), '$[*]' COLUMNS ( \
                    i FOR ORDINALITY, \
                    version VARCHAR(150) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$')) AS versions \
                    ON versions.i = channels.i"
            }
            Layout::Shallow => {
                "JSON_TABLE(JSON_KEYS(page.checkpoint, '$.channel_versions'), '$[*]' COLUMNS ( \
                    channel VARCHAR(150) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$')) AS channels"
            }
        }
    }

    /// The condition matching a blob to the version the document names (shallow blobs have
    /// none: the row of a channel is its latest value).
    pub(crate) fn blob_version(self) -> &'static str {
        match self {
            Layout::Full => "AND bl.version = versions.version",
            Layout::Shallow => "",
        }
    }
}

/// The predicates of a read; each `Some` adds one.
#[derive(Debug, Default)]
pub(crate) struct Filter<'a> {
    /// `thread_id = ?`
    pub(crate) thread_id: Option<&'a str>,
    /// `checkpoint_ns_hash = ?`
    pub(crate) ns_hash: Option<[u8; 16]>,
    /// `checkpoint_id = ?`
    pub(crate) checkpoint_id: Option<&'a str>,
    /// `JSON_CONTAINS(metadata, ?)` with this JSON text.
    pub(crate) metadata: Option<String>,
    /// `checkpoint_id < ?`
    pub(crate) before: Option<&'a str>,
}

/// LangGraph's `SELECT_SQL`: one row per checkpoint with its document, metadata, the blobs of its
/// channel versions and its pending writes, each aggregated into one JSON array.
///
/// Two departures from LangGraph's text, same result:
/// - The matching checkpoints are selected first (the `page` CTE, with order and limit), and the
///   blobs of each are looked up from its own `channel_versions` (a `JSON_TABLE` over the row's
///   document, driving a primary-key lookup per channel, as LangGraph's shallow saver does).
///   LangGraph's CTE expands the versions of every checkpoint matching the filter and joins them
///   to all blobs of the thread, so reading the latest checkpoint costs time proportional to the
///   thread's length; here it costs the same at any length.
/// - The channel names read from the document are `utf8mb4_bin`. LangGraph leaves the server's
///   default collation, which fails with "illegal mix of collations" in a database whose
///   collation differs (e.g. `utf8mb4_unicode_ci`); a `_bin` side wins the comparison, and channel
///   names are case-sensitive anyway.
///
/// The blobs come base64-encoded inside the arrays: MySQL renders a BLOB in JSON as
/// `"base64:type251:<data>"`, MariaDB needs an explicit `TO_BASE64`. The aggregates have no order;
/// the caller sorts. On MariaDB `JSON_ARRAYAGG` is built on `GROUP_CONCAT` and silently truncated
/// at `group_concat_max_len` (1 MiB by default), so the statement raises that limit for itself.
///
/// No string the server builds may exceed `max_allowed_packet`: `TO_BASE64` then returns NULL and
/// the aggregate is cut short or NULL, with a mere warning. So each aggregate comes as
/// `<row count>:<JSON array>`, and as the bare count when its blobs are too large to be sent
/// this way (over a quarter of the limit, base64 being a third larger); each channel value says
/// whether its blob is NULL. The reader ([`rows`](crate::rows)) fetches the blobs of a
/// checkpoint whose aggregate is not complete on their own (see [`crate::oversized`]).
pub(crate) fn select<'a>(layout: Layout, filter: &Filter<'a>, limit: Option<usize>) -> Statement<'a> {
    let id = layout.id();
    // Exact, as the thread id (see `exact`): a checkpoint id differing in case or trailing
    // spaces is another checkpoint.
    let id_equals = format!("{id} = ? AND CAST(CONVERT({id} USING utf8mb4) AS BINARY) = CAST(? AS BINARY)");
    let id_before = format!("{id} < ?");
    let mut predicates: Vec<&str> = Vec::new();
    let mut binds: Vec<Bind<'a>> = Vec::new();
    if let Some(thread_id) = filter.thread_id {
        predicates.push(same!("thread_id"));
        binds.extend([Bind::Text(thread_id), Bind::Text(thread_id)]);
    }
    if let Some(hash) = filter.ns_hash {
        predicates.push("checkpoint_ns_hash = ?");
        binds.push(Bind::Hash(hash));
    }
    if let Some(id) = filter.checkpoint_id {
        predicates.push(&id_equals);
        binds.extend([Bind::Text(id), Bind::Text(id)]);
    }
    if let Some(metadata) = &filter.metadata {
        predicates.push("JSON_CONTAINS(metadata, ?)");
        binds.push(Bind::Owned(metadata.clone()));
    }
    if let Some(before) = filter.before {
        predicates.push(&id_before);
        binds.push(Bind::Text(before));
    }
    let where_clause =
        if predicates.is_empty() { String::new() } else { format!("WHERE {}", predicates.join(" AND ")) };
    let limit_clause = match limit {
        Some(limit) => {
            binds.push(Bind::Count(limit as u64));
            "LIMIT ?"
        }
        None => "",
    };

    let mut sql = String::with_capacity(2048);
    // Written with `write!` into a String, which cannot fail.
    let (parent, channels, blob_version) = (layout.parent(), layout.channels(), layout.blob_version());
    let (same_thread, same_channel) =
        (same_columns!("bl.thread_id", "page.thread_id"), same_columns!("bl.channel", "channels.channel"));
    let (same_write_thread, same_write_checkpoint) = (
        same_columns!("cw.thread_id", "page.thread_id"),
        same_columns!("cw.checkpoint_id", "page.checkpoint_id"),
    );
    let _ = write!(
        sql,
        "/*M! SET STATEMENT group_concat_max_len = 4294967295 FOR */ \
        WITH page AS ( \
            SELECT thread_id, checkpoint_ns, checkpoint_ns_hash, {id} AS checkpoint_id, \
                {parent} AS parent_checkpoint_id, checkpoint, metadata \
            FROM checkpoints {where_clause} \
            ORDER BY {id} DESC {limit_clause} \
        ) \
        SELECT page.thread_id, page.checkpoint, page.checkpoint_ns, page.checkpoint_id, \
            page.parent_checkpoint_id, page.metadata, \
            (SELECT IF(SUM(LENGTH(bl.`blob`)) > @@max_allowed_packet DIV 4, CAST(COUNT(*) AS CHAR), \
                    CONCAT_WS(':', COUNT(*), JSON_ARRAYAGG(JSON_ARRAY(bl.channel, bl.type, \
                        /*!50700 bl.`blob`*//*M! TO_BASE64(bl.`blob`)*/, bl.`blob` IS NULL)))) \
                FROM {channels} \
                STRAIGHT_JOIN checkpoint_blobs bl \
                    ON {same_thread} \
                    AND bl.checkpoint_ns_hash = page.checkpoint_ns_hash \
                    AND {same_channel} \
                    {blob_version} \
            ) AS channel_values, \
            (SELECT IF(SUM(LENGTH(cw.`blob`)) > @@max_allowed_packet DIV 4, CAST(COUNT(*) AS CHAR), \
                    CONCAT_WS(':', COUNT(*), JSON_ARRAYAGG(JSON_ARRAY(cw.task_id, cw.channel, cw.type, \
                        /*!50700 cw.`blob`*//*M! TO_BASE64(cw.`blob`)*/, cw.idx)))) \
                FROM checkpoint_writes cw \
                WHERE {same_write_thread} \
                    AND cw.checkpoint_ns_hash = page.checkpoint_ns_hash \
                    AND {same_write_checkpoint} \
            ) AS pending_writes \
        FROM page \
        ORDER BY page.checkpoint_id DESC"
    );
    Statement { sql: sql.into(), binds }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_multi_row_upsert_of_one_row_is_the_single_upsert() {
        let one = multi_row(UPSERT_CHECKPOINTS, CHECKPOINT_ROW, 1, UPSERT_CHECKPOINTS_TAIL);
        assert_eq!(one, UPSERT_CHECKPOINT);
        let two = multi_row(UPSERT_CHECKPOINTS, CHECKPOINT_ROW, 2, UPSERT_CHECKPOINTS_TAIL);
        assert_eq!(two.matches(CHECKPOINT_ROW).count(), 2);
    }

    #[test]
    fn multi_row_statements() {
        assert_eq!(multi_row("INSERT x VALUES ", "(?)", 3, ";"), "INSERT x VALUES (?), (?), (?);");
    }

    #[test]
    fn select_binds_every_placeholder() {
        let filter =
            Filter { thread_id: Some("t"), ns_hash: Some([0; 16]), before: Some("b"), ..Filter::default() };
        let statement = select(Layout::Full, &filter, Some(3));
        assert_eq!(statement.binds.len(), 5);
        assert_eq!(statement.sql.matches('?').count(), 5);
        assert!(statement.sql.contains(&format!(
            "WHERE {} AND checkpoint_ns_hash = ? AND checkpoint_id < ?",
            same!("thread_id")
        )));
        assert!(statement.sql.contains("ORDER BY checkpoint_id DESC LIMIT ?"));
        let all = select(Layout::Full, &Filter::default(), None);
        assert!(all.binds.is_empty() && !all.sql.contains('?'));
        let shallow =
            select(Layout::Shallow, &Filter { checkpoint_id: Some("i"), ..Filter::default() }, None);
        assert!(shallow.sql.contains("WHERE JSON_UNQUOTE(JSON_EXTRACT(checkpoint, '$.id')) = ?"));
        assert!(!shallow.sql.contains("bl.version"));
    }
}
