//! `get_tuple` and `list`: one statement each ([`select`](crate::select)).

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, CheckpointTuple, ListOptions};
use sqlx::PgPool;

use crate::document::json_text;
use crate::error::backend;
use crate::select::{query, statement, Filter};
use crate::text::escape_json;
use crate::tuple::from_row;

/// The checkpoint at `config`, or the latest of its thread and namespace.
pub(crate) async fn get_tuple(
    pool: &PgPool,
    config: &CheckpointConfig,
) -> Result<Option<CheckpointTuple>, CheckpointError> {
    let (sql, args) = statement(&Filter { config: Some(config), limit: Some(1), ..Filter::default() })?;
    let row = query(&sql, args).fetch_optional(pool).await.map_err(backend)?;
    row.as_ref().map(from_row).transpose()
}

/// Checkpoints newest first, of one thread and namespace or of all.
pub(crate) async fn list(
    pool: &PgPool,
    config: Option<&CheckpointConfig>,
    options: ListOptions,
) -> Result<Vec<CheckpointTuple>, CheckpointError> {
    if options.limit == Some(0) {
        return Ok(Vec::new());
    }
    let metadata = match options.filter.filter(|f| !f.is_empty()) {
        Some(filter) => Some(json_text(&escape_json(serde_json::Value::Object(filter)))?),
        None => None,
    };
    let filter = Filter { config, metadata, before: options.before.as_deref(), limit: options.limit };
    let (sql, args) = statement(&filter)?;
    let rows = query(&sql, args).fetch_all(pool).await.map_err(backend)?;
    rows.iter().map(from_row).collect()
}
