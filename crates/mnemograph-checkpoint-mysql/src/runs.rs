//! `delete_for_runs` of both savers: the checkpoints whose metadata `run_id` is one of the given
//! ids, in every thread, with their pending writes and the blobs only they needed.
//!
//! No index serves the metadata, so finding the checkpoints reads every row of `checkpoints`:
//! an operator's call, not one for a request path.

use std::collections::BTreeSet;

use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::{MySql, MySqlPool, Row as _, Transaction};

use crate::commit::delete::delete_rows;
use crate::delta;
use crate::error::backend;
use crate::exact::same;
use crate::retention::PRUNE_BLOBS;
use crate::sql::Layout;

/// How many run ids one statement names: well under the server's placeholder limit.
const RUNS_PER_STATEMENT: usize = 500;

/// The rows whose metadata `run_id` is a string in the list; the list's placeholders follow.
/// Compared byte for byte: the JSON text's collation would make `Run-1` and `run-1` one run.
fn select_runs(layout: Layout, runs: usize) -> String {
    let id = match layout {
        Layout::Full => "checkpoint_id",
        Layout::Shallow => "JSON_UNQUOTE(JSON_EXTRACT(checkpoint, '$.id'))",
    };
    format!(
        "SELECT thread_id, checkpoint_ns_hash, {id} FROM checkpoints \
         WHERE JSON_TYPE(JSON_EXTRACT(metadata, '$.run_id')) = 'STRING' \
         AND CAST(JSON_UNQUOTE(JSON_EXTRACT(metadata, '$.run_id')) AS BINARY) IN ({}) FOR UPDATE",
        vec!["CAST(? AS BINARY)"; runs].join(", ")
    )
}

/// One checkpoint of a listed run: thread, namespace hash, id.
type Found = (String, Vec<u8>, String);

/// Deletes the checkpoints of `run_ids` in one transaction; returns the threads it changed, so
/// caches of them can be dropped.
pub(crate) async fn delete_for_runs(
    pool: &MySqlPool,
    layout: Layout,
    run_ids: &[String],
) -> Result<BTreeSet<String>, CheckpointError> {
    if run_ids.is_empty() {
        return Ok(BTreeSet::new());
    }
    let mut tx = pool.begin().await.map_err(backend)?;
    let mut found: Vec<Found> = Vec::new();
    for runs in run_ids.chunks(RUNS_PER_STATEMENT) {
        let text = select_runs(layout, runs.len());
        let query = runs.iter().fold(sqlx::query(&text), |q, run| q.bind(run));
        for row in query.fetch_all(&mut *tx).await.map_err(backend)? {
            let thread: String = row.try_get_unchecked(0).map_err(backend)?;
            let hash: Vec<u8> = row.try_get_unchecked(1).map_err(backend)?;
            let id: String = row.try_get_unchecked(2).map_err(backend)?;
            found.push((thread, hash, id));
        }
    }
    match layout {
        Layout::Full => delete_full(&mut tx, &found).await,
        Layout::Shallow => delete_shallow(&mut tx, &found).await,
    }
    .map_err(backend)?;
    tx.commit().await.map_err(backend)?;
    Ok(found.into_iter().map(|(thread, _, _)| thread).collect())
}

/// Full tables: each checkpoint and its writes by key, then the blobs of each namespace touched
/// that no remaining checkpoint, or delta chain of one, needs.
async fn delete_full(tx: &mut Transaction<'_, MySql>, found: &[Found]) -> Result<(), sqlx::Error> {
    const CHECKPOINT: &str = concat!(
        "DELETE FROM checkpoints WHERE ",
        same!("thread_id"),
        " AND checkpoint_ns_hash = ? AND ",
        same!("checkpoint_id")
    );
    const WRITES: &str = concat!(
        "DELETE FROM checkpoint_writes WHERE ",
        same!("thread_id"),
        " AND checkpoint_ns_hash = ? AND ",
        same!("checkpoint_id")
    );
    let mut namespaces = BTreeSet::new();
    for (thread, hash, id) in found {
        for text in [CHECKPOINT, WRITES] {
            let query = sqlx::query(text).bind(thread).bind(thread).bind(hash).bind(id).bind(id);
            query.execute(&mut **tx).await?;
        }
        namespaces.insert((thread, hash));
    }
    for (thread, hash) in namespaces {
        delta::prune_blobs(tx, thread, hash, PRUNE_BLOBS).await?;
    }
    Ok(())
}

/// Shallow tables: a namespace holds one checkpoint, so its row, blobs and writes all go.
async fn delete_shallow(tx: &mut Transaction<'_, MySql>, found: &[Found]) -> Result<(), sqlx::Error> {
    for (thread, hash, _) in found {
        for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
            let text = format!("DELETE FROM {table} WHERE {} AND checkpoint_ns_hash = ?", same!("thread_id"));
            sqlx::query(&text).bind(thread).bind(thread).bind(hash).execute(&mut **tx).await?;
        }
    }
    Ok(())
}

/// `prune` of the shallow saver: each namespace keeps only its latest checkpoint already, so
/// `KeepLatest` removes nothing; `Delete` removes the threads, all in one transaction.
pub(crate) async fn prune_shallow(
    pool: &MySqlPool,
    thread_ids: &[String],
    delete: bool,
) -> Result<(), CheckpointError> {
    if thread_ids.is_empty() || !delete {
        return Ok(());
    }
    let mut tx = pool.begin().await.map_err(backend)?;
    for thread_id in thread_ids {
        delete_rows(&mut tx, thread_id).await.map_err(backend)?;
    }
    tx.commit().await.map_err(backend)
}
