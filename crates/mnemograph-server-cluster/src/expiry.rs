//! The cluster's part of the sweep: finished runs past the run retention, and with a thread TTL
//! the idle threads past it, deleted from the shared tables. Every process sweeps; the deletes
//! are idempotent, so processes sweeping at once only share the work.

use mnemograph_core::checkpoint::DynCheckpointer;
use sqlx::Row;

use super::ledger::Ledger;
use super::tables;
use crate::queue::mysql::db;
use mnemograph_server::__cluster::stamp_before;
use mnemograph_server::__cluster::Retention;
use mnemograph_server::Result;

/// How many rows one delete statement takes, so that no sweep holds locks for long.
const BATCH: u64 = 1000;

impl Ledger {
    /// Deletes the finished runs (records, requests and outputs) last updated longer ago than
    /// the run retention and, with a thread TTL, the threads not updated within it that no run
    /// holds or waits for, with their runs and then their checkpoints.
    pub(crate) async fn sweep(&self, retention: &Retention, saver: &dyn DynCheckpointer) -> Result<()> {
        let pool = self.queue.pool();
        let age = i64::try_from(retention.runs.as_micros()).unwrap_or(i64::MAX);
        loop {
            let sql = format!(
                "DELETE FROM server_runs WHERE status IN ('success', 'error', 'interrupted', 'timeout') \
                 AND updated_at < UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND LIMIT {BATCH}"
            );
            let done = sqlx::query(&sql).bind(age).execute(pool).await.map_err(db)?;
            if done.rows_affected() < BATCH {
                break;
            }
        }
        let Some(ttl) = retention.thread_ttl else { return Ok(()) };
        let cutoff = stamp_before(ttl);
        let sql = format!(
            "SELECT thread_id FROM server_threads WHERE updated_at < ? AND updated_at <> '' \
             AND temporary = 0 AND status <> 'busy' ORDER BY updated_at LIMIT {BATCH}"
        );
        let rows = sqlx::query(&sql).bind(&cutoff).fetch_all(pool).await.map_err(db)?;
        for row in rows {
            let thread_id: String = row.try_get("thread_id").map_err(db)?;
            if self.expire_thread(&thread_id, &cutoff).await? {
                if let Err(e) = saver.delete_thread(&thread_id).await {
                    tracing::warn!(thread_id = %thread_id, error = %e, "deleting an expired thread's checkpoints failed");
                }
            }
        }
        Ok(())
    }

    /// Deletes a thread and its runs if, under its lock, it is still idle, not a stateless run's,
    /// and last updated before `cutoff`; whether it did.
    async fn expire_thread(&self, thread_id: &str, cutoff: &str) -> Result<bool> {
        in_tx!(self.queue.pool(), |tx| {
            let Some((thread, temporary)) = tables::thread_in(tx, thread_id, true).await? else {
                return Ok(Ok(false));
            };
            if temporary || thread.status == "busy" || thread.updated_at.as_str() >= cutoff {
                return Ok(Ok(false));
            }
            if !tables::open_runs(tx, thread_id).await?.is_empty() {
                return Ok(Ok(false));
            }
            for sql in [
                "DELETE FROM server_runs WHERE thread_id = ?",
                "DELETE FROM server_threads WHERE thread_id = ?",
            ] {
                sqlx::query(sql).bind(thread_id).execute(&mut **tx).await?;
            }
            Ok(Ok(true))
        })
    }
}
