//! The read statement of `get_tuple` and `list`: checkpoint rows, each with the blobs of its
//! channel versions and its pending writes, in one round trip.
//!
//! LangGraph's saver aggregates both into two-dimensional `bytea` arrays; here each column is
//! aggregated on its own (one array per column, all in the same order) because the driver reads
//! one-dimensional arrays only. The rows joined are LangGraph's: blobs by `thread_id`,
//! `checkpoint_ns`, `channel` and the `version` the document names; writes by the checkpoint's
//! key. Writes come in LangGraph's order, `(task_path, task_id, idx)`, compared as Python
//! compares strings (by code point, whatever the database's collation).

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError};
use sqlx::postgres::PgArguments;
use sqlx::query::Query;
use sqlx::{Arguments as _, Postgres};

use crate::text::escape;

/// The pending writes of the checkpoint row `c`, one array per column, in LangGraph's order.
macro_rules! writes_of_c {
    () => {
        r#"LEFT JOIN LATERAL (
    SELECT array_agg(cw.task_id ORDER BY cw.task_path COLLATE "C", cw.task_id COLLATE "C", cw.idx) AS task_ids,
        array_agg(cw.channel ORDER BY cw.task_path COLLATE "C", cw.task_id COLLATE "C", cw.idx) AS channels,
        array_agg(cw.type ORDER BY cw.task_path COLLATE "C", cw.task_id COLLATE "C", cw.idx) AS types,
        array_agg(cw.blob ORDER BY cw.task_path COLLATE "C", cw.task_id COLLATE "C", cw.idx) AS blobs
    FROM checkpoint_writes cw
    WHERE cw.thread_id = c.thread_id AND cw.checkpoint_ns = c.checkpoint_ns
        AND cw.checkpoint_id = c.checkpoint_id
) AS w ON TRUE
"#
    };
}
pub(crate) use writes_of_c;

/// The statement, up to its `WHERE`.
const SELECT: &str = concat!(
    r#"SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id,
    c.checkpoint::text AS checkpoint, c.metadata::text AS metadata,
    b.channels, b.types, b.blobs,
    w.task_ids, w.channels AS write_channels, w.types AS write_types, w.blobs AS write_blobs
FROM checkpoints c
LEFT JOIN LATERAL (
    SELECT array_agg(bl.channel ORDER BY bl.channel) AS channels,
        array_agg(bl.type ORDER BY bl.channel) AS types,
        array_agg(bl.blob ORDER BY bl.channel) AS blobs
    FROM jsonb_each_text(c.checkpoint -> 'channel_versions') AS v
    JOIN checkpoint_blobs bl
        ON bl.thread_id = c.thread_id AND bl.checkpoint_ns = c.checkpoint_ns
        AND bl.channel = v.key AND bl.version = v.value
) AS b ON TRUE
"#,
    writes_of_c!()
);

/// What to select.
#[derive(Debug, Default)]
pub(crate) struct Filter<'a> {
    /// The thread and namespace (and checkpoint, when it has an id); every thread when `None`.
    pub(crate) config: Option<&'a CheckpointConfig>,
    /// Metadata the checkpoint's must contain, JSON text in stored form.
    pub(crate) metadata: Option<String>,
    /// Only ids below this one.
    pub(crate) before: Option<&'a str>,
    /// At most this many rows.
    pub(crate) limit: Option<usize>,
}

/// The statement for `filter`, newest first, with its arguments bound.
pub(crate) fn statement(filter: &Filter<'_>) -> Result<(String, PgArguments), CheckpointError> {
    let mut sql = String::from(SELECT);
    let mut args = PgArguments::default();
    let mut wheres = Vec::new();
    let bind = |args: &mut PgArguments, value: String| -> Result<usize, CheckpointError> {
        args.add(value).map_err(|e| CheckpointError::Invalid(e.to_string()))?;
        Ok(args.len())
    };
    if let Some(config) = filter.config {
        wheres.push(format!("c.thread_id = ${}", bind(&mut args, escape(&config.thread_id).into_owned())?));
        wheres.push(format!(
            "c.checkpoint_ns = ${}",
            bind(&mut args, escape(&config.checkpoint_ns).into_owned())?
        ));
        if let Some(id) = &config.checkpoint_id {
            wheres.push(format!("c.checkpoint_id = ${}", bind(&mut args, escape(id).into_owned())?));
        }
    }
    if let Some(metadata) = &filter.metadata {
        wheres.push(format!("c.metadata @> ${}::jsonb", bind(&mut args, metadata.clone())?));
    }
    if let Some(before) = filter.before {
        wheres.push(format!("c.checkpoint_id < ${}", bind(&mut args, escape(before).into_owned())?));
    }
    if !wheres.is_empty() {
        sql.push_str("WHERE ");
        sql.push_str(&wheres.join(" AND "));
    }
    sql.push_str(" ORDER BY c.checkpoint_id DESC");
    if let Some(limit) = filter.limit {
        // A limit beyond i64 selects everything anyway.
        sql.push_str(&format!(" LIMIT {}", i64::try_from(limit).unwrap_or(i64::MAX)));
    }
    Ok((sql, args))
}

/// The statement as a query to run.
pub(crate) fn query(sql: &str, args: PgArguments) -> Query<'_, Postgres, PgArguments> {
    sqlx::query_with(sql, args)
}
