//! Reading checkpoints back, the same for the full and the shallow saver.

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, CheckpointTuple, ListOptions};
use sqlx::MySqlPool;

use crate::delta::{self, DeltaState};
use crate::error::backend;
use crate::keys::ns_hash;
use crate::read_io::ReadIo;
use crate::sql::{self, Filter, Layout};
use crate::statement::Statement;
use crate::{pyjson, rows};

/// `get_tuple` of both savers.
pub(crate) async fn get_tuple(
    pool: &MySqlPool,
    layout: Layout,
    config: &CheckpointConfig,
) -> Result<Option<CheckpointTuple>, CheckpointError> {
    get_tuple_cached(pool, layout, config, None).await
}

/// `get_tuple`, delta blobs resolved (full layout), and the values of delta channels recorded in
/// `delta`'s cache for the next `put`.
pub(crate) async fn get_tuple_cached(
    pool: &MySqlPool,
    layout: Layout,
    config: &CheckpointConfig,
    delta: Option<&DeltaState>,
) -> Result<Option<CheckpointTuple>, CheckpointError> {
    let filter = Filter {
        thread_id: Some(&config.thread_id),
        ns_hash: Some(ns_hash(&config.checkpoint_ns)),
        checkpoint_id: config.checkpoint_id.as_deref(),
        ..Filter::default()
    };
    let statement = sql::select(layout, &filter, Some(1));
    let mut io = ReadIo::default();
    let read = read_rows(pool, layout, statement, &mut io).await;
    io.record();
    let (mut raw, resolved) = read?;
    if let Some(delta) = delta {
        delta.remember_read(&raw, 0, &resolved);
    }
    raw.pop().map(rows::RawTuple::finish).transpose()
}

/// `list` of both savers.
pub(crate) async fn list(
    pool: &MySqlPool,
    layout: Layout,
    config: Option<&CheckpointConfig>,
    options: ListOptions,
) -> Result<Vec<CheckpointTuple>, CheckpointError> {
    if options.limit == Some(0) {
        return Ok(Vec::new());
    }
    // Python's `json.dumps` form: on MariaDB, JSON_CONTAINS compares strings as written.
    let metadata = match options.filter.filter(|f| !f.is_empty()) {
        Some(f) => Some(pyjson::dumps(&f).map_err(|e| CheckpointError::Invalid(e.to_string()))?),
        None => None,
    };
    let filter = Filter {
        thread_id: config.map(|c| c.thread_id.as_str()),
        ns_hash: config.map(|c| ns_hash(&c.checkpoint_ns)),
        checkpoint_id: config.and_then(|c| c.checkpoint_id.as_deref()),
        metadata,
        before: options.before.as_deref(),
    };
    let statement = sql::select(layout, &filter, options.limit);
    let mut io = ReadIo::default();
    let read = read_rows(pool, layout, statement, &mut io).await;
    io.record();
    read?.0.into_iter().map(rows::RawTuple::finish).collect()
}

/// The rows of `statement`, oversized values fetched and delta chains resolved (full layout),
/// with what it cost tallied in `io` whether it succeeds or not.
async fn read_rows(
    pool: &MySqlPool,
    layout: Layout,
    statement: Statement<'_>,
    io: &mut ReadIo,
) -> Result<(Vec<rows::RawTuple>, Vec<delta::Resolved>), CheckpointError> {
    io.statement();
    let found = statement.query().fetch_all(pool).await.map_err(backend)?;
    let mut raw = Vec::with_capacity(found.len());
    for row in &found {
        let tuple = rows::raw(pool, layout, row).await?;
        io.add(tuple.io);
        raw.push(tuple);
    }
    let resolved = match layout {
        // The chains of all listed checkpoints in one statement.
        Layout::Full => delta::resolve(pool, &mut raw, io).await?,
        Layout::Shallow => Vec::new(),
    };
    Ok((raw, resolved))
}
