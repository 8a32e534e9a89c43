//! Reading checkpoints back, the same for the full and the shallow saver.

use mnemograph_core::checkpoint::{CheckpointConfig, CheckpointError, CheckpointTuple, ListOptions};
use sqlx::MySqlPool;

use crate::delta::{self, DeltaState};
use crate::error::backend;
use crate::keys::ns_hash;
use crate::sql::{self, Filter, Layout};
use crate::{pyjson, rows};

/// `get_tuple` of both savers.
pub(crate) async fn get_tuple(
    pool: &MySqlPool,
    layout: Layout,
    config: &CheckpointConfig,
) -> Result<Option<CheckpointTuple>, CheckpointError> {
    get_tuple_remembering(pool, layout, config, None).await
}

/// `get_tuple`, delta blobs resolved (full layout), and the values of delta channels recorded in
/// `delta`'s cache for the next `put`.
pub(crate) async fn get_tuple_remembering(
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
    let row = statement.query().fetch_optional(pool).await.map_err(backend)?;
    let Some(row) = row else { return Ok(None) };
    let mut raw = [rows::raw(pool, layout, &row).await?];
    if layout == Layout::Full {
        let resolved = delta::resolve(pool, &mut raw).await?;
        if let Some(delta) = delta {
            delta.remember_read(&raw, 0, &resolved);
        }
    }
    let [raw] = raw;
    raw.finish().map(Some)
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
    let found = statement.query().fetch_all(pool).await.map_err(backend)?;
    let mut raw = Vec::with_capacity(found.len());
    for row in &found {
        raw.push(rows::raw(pool, layout, row).await?);
    }
    if layout == Layout::Full {
        // The chains of all listed checkpoints in one statement.
        delta::resolve(pool, &mut raw).await?;
    }
    raw.into_iter().map(rows::RawTuple::finish).collect()
}
