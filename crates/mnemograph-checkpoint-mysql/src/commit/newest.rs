//! Reading the newest checkpoint of a namespace, as a plain read: what a conflict names.

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError};
use sqlx::mysql::MySqlRow;
use sqlx::Row as _;

use crate::error::backend;
use crate::exact::same;
use crate::statement::{Bind, Statement};

/// Full layout: the newest checkpoint id after the one bound (`''`: the newest of all), as a
/// plain read.
const NEWEST_AFTER: &str = concat!(
    "SELECT checkpoint_id FROM checkpoints WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND checkpoint_id > ? ORDER BY checkpoint_id DESC LIMIT 1"
);

/// The read of the newest checkpoint id of `config`'s namespace (`hash`), as a plain read.
pub(crate) fn newest_of_all<'a>(config: &'a CheckpointConfig, hash: &[u8; 16]) -> Statement<'a> {
    let mut newest = Statement::by_thread(NEWEST_AFTER, &config.thread_id, *hash);
    // `''` sorts before every id.
    newest.push(Bind::Text(""));
    newest
}

/// The first column of the first of `rows`, a checkpoint id (`None`: no row, or NULL).
pub(crate) fn first_id(rows: &[MySqlRow]) -> Result<Option<String>, CheckpointError> {
    match rows.first() {
        Some(row) => row.try_get::<Option<String>, _>(0).map_err(backend),
        None => Ok(None),
    }
}
