//! [`ClusterCrons`]: the [`CronKeeper`] of a cluster, its crons in the shared database, where
//! each process's scheduler claims a tick with a conditional update of the cron's next run date,
//! so that exactly one process makes each tick's run.

use futures_util::future::BoxFuture;
use sqlx::mysql::MySqlPool;
use sqlx::Row;
use tokio::sync::OnceCell;

use super::conditions::Conditions;
use super::cron_rows::{self as rows, cron_of, CRON_COLUMNS};
use crate::queue::mysql::db;
use mnemograph_server::__cluster::cron::{utc_now, CronChange, CronRecord, CronSearch};
use mnemograph_server::__cluster::cron_not_found;
use mnemograph_server::__cluster::GrantRules;
use mnemograph_server::__cluster::{CronKeeper, CronsOf};
use mnemograph_server::auth::Grant;
use mnemograph_server::Result;

/// A cluster's crons, as this process reaches them.
pub(crate) struct ClusterCrons {
    pool: MySqlPool,
    /// Set once the table is in place; a failure is tried again by the next call.
    ready: OnceCell<()>,
}

impl ClusterCrons {
    /// The crons in the database of `pool`.
    pub(crate) fn new(pool: MySqlPool) -> Self {
        Self { pool, ready: OnceCell::new() }
    }

    /// Makes the table when missing.
    async fn ready(&self) -> Result<&MySqlPool> {
        self.ready
            .get_or_try_init(|| async {
                sqlx::query(rows::SETUP).execute(&self.pool).await.map_err(db)?;
                Ok::<_, mnemograph_server::ServerError>(())
            })
            .await?;
        Ok(&self.pool)
    }
}

/// The condition of a search of crons and the values it binds.
fn conditions(q: &CronSearch) -> Conditions {
    let mut found = Conditions::new();
    for (column, value) in [("assistant_id", &q.assistant_id), ("thread_id", &q.thread_id)] {
        if let Some(value) = value {
            found.and(&format!("{column} = ?"), value.clone());
        }
    }
    if let Some(enabled) = q.enabled {
        found.and_fixed(if enabled { "enabled = 1" } else { "enabled = 0" });
    }
    found.contains(&q.metadata);
    found.contains(&q.within);
    found
}

/// The cron, if `grant` reaches it.
fn reached(found: Option<CronRecord>, cron_id: &str, grant: &Grant) -> Result<CronRecord> {
    found.filter(|c| grant.admits(&c.metadata)).ok_or_else(|| cron_not_found(cron_id))
}

impl CronKeeper for ClusterCrons {
    fn create(&self, record: CronRecord) -> BoxFuture<'_, Result<CronRecord>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            rows::insert(pool, &record).await.map_err(db)?;
            Ok(record)
        })
    }

    fn get<'a>(&'a self, cron_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<CronRecord>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            let sql = format!("SELECT {CRON_COLUMNS} FROM server_crons WHERE cron_id = ?");
            let row = sqlx::query(&sql).bind(cron_id).fetch_optional(pool).await.map_err(db)?;
            reached(row.as_ref().map(cron_of).transpose().map_err(db)?, cron_id, grant)
        })
    }

    fn update<'a>(
        &'a self,
        cron_id: &'a str,
        change: &'a CronChange,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<CronRecord>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            in_tx!(pool, |tx| {
                let sql = format!("SELECT {CRON_COLUMNS} FROM server_crons WHERE cron_id = ? FOR UPDATE");
                let row = sqlx::query(&sql).bind(cron_id).fetch_optional(&mut **tx).await?;
                let current = match reached(row.as_ref().map(cron_of).transpose()?, cron_id, grant) {
                    Ok(current) => current,
                    Err(missing) => return Ok(Err(missing)),
                };
                let mut changed = match change.apply(&current, utc_now()) {
                    Ok(changed) => changed,
                    Err(refused) => return Ok(Err(refused)),
                };
                grant.stamp(&mut changed.metadata);
                rows::write(&mut **tx, &changed).await?;
                Ok(Ok(changed))
            })
        })
    }

    fn delete<'a>(&'a self, cron_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            in_tx!(pool, |tx| {
                let sql = format!("SELECT {CRON_COLUMNS} FROM server_crons WHERE cron_id = ? FOR UPDATE");
                let row = sqlx::query(&sql).bind(cron_id).fetch_optional(&mut **tx).await?;
                if let Err(missing) = reached(row.as_ref().map(cron_of).transpose()?, cron_id, grant) {
                    return Ok(Err(missing));
                }
                sqlx::query("DELETE FROM server_crons WHERE cron_id = ?")
                    .bind(cron_id)
                    .execute(&mut **tx)
                    .await?;
                Ok(Ok(()))
            })
        })
    }

    fn forget<'a>(&'a self, of: CronsOf<'a>) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            let (sql, id) = match of {
                CronsOf::Thread(id) => ("DELETE FROM server_crons WHERE thread_id = ?", id),
                CronsOf::Assistant(id) => ("DELETE FROM server_crons WHERE assistant_id = ?", id),
            };
            sqlx::query(sql).bind(id).execute(pool).await.map_err(db)?;
            Ok(())
        })
    }

    fn search<'a>(&'a self, q: &'a CronSearch) -> BoxFuture<'a, Result<(Vec<CronRecord>, bool)>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            let found = conditions(q);
            let order = if q.descending { "DESC" } else { "ASC" };
            // One row past the page tells whether more follow it.
            let sql = format!(
                "SELECT {CRON_COLUMNS} FROM server_crons WHERE {} ORDER BY {} {order}, cron_id {order} \
                 LIMIT {} OFFSET {}",
                found.sql,
                rows::sort_column(q.sort_by),
                q.limit.saturating_add(1),
                q.offset
            );
            let rows = found.bind(sqlx::query(&sql)).fetch_all(pool).await.map_err(db)?;
            let mut page: Vec<CronRecord> =
                rows.iter().map(cron_of).collect::<sqlx::Result<_>>().map_err(db)?;
            let more = page.len() > q.limit;
            page.truncate(q.limit);
            Ok((page, more))
        })
    }

    fn count<'a>(&'a self, q: &'a CronSearch) -> BoxFuture<'a, Result<usize>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            let found = conditions(q);
            let sql = format!("SELECT COUNT(*) AS n FROM server_crons WHERE {}", found.sql);
            let row = found.bind(sqlx::query(&sql)).fetch_one(pool).await.map_err(db)?;
            let n: i64 = row.try_get("n").map_err(db)?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    fn due<'a>(&'a self, now: &'a str) -> BoxFuture<'a, Result<Vec<CronRecord>>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            let sql = format!(
                "SELECT {CRON_COLUMNS} FROM server_crons WHERE enabled = 1 AND next_run_date <= ? \
                 AND (end_time IS NULL OR end_time >= ?) ORDER BY next_run_date"
            );
            let rows = sqlx::query(&sql).bind(now).bind(now).fetch_all(pool).await.map_err(db)?;
            rows.iter().map(cron_of).collect::<sqlx::Result<_>>().map_err(db)
        })
    }

    fn claim<'a>(&'a self, cron_id: &'a str, seen: &'a str, next: &'a str) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let pool = self.ready().await?;
            // The compare-and-set that makes a tick one process's: of the processes that saw the
            // cron due with `seen`, the one whose update finds it still there moves it on.
            let done = sqlx::query(
                "UPDATE server_crons SET next_run_date = ? WHERE cron_id = ? AND next_run_date = ?",
            )
            .bind(next)
            .bind(cron_id)
            .bind(seen)
            .execute(pool)
            .await
            .map_err(db)?;
            Ok(done.rows_affected() == 1)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use chrono::{TimeZone, Utc};

    use super::*;
    use mnemograph_server::__cluster::cron::stamp;
    use mnemograph_server::__cluster::cron::take_due;

    async fn drop_database(pool: &MySqlPool) {
        let name: String = sqlx::query_scalar("SELECT DATABASE()").fetch_one(pool).await.expect("its name");
        sqlx::raw_sql(&format!("DROP DATABASE `{name}`")).execute(pool).await.expect("DROP DATABASE");
    }

    #[tokio::test]
    async fn the_cluster_keeper_keeps_crons_as_langgraph_does() {
        let Some(pool) = super::super::assistants::tests::fresh_pool().await else { return };
        mnemograph_server::__cluster::conformance::cron_keeper_semantics(&ClusterCrons::new(pool.clone()))
            .await;
        drop_database(&pool).await;
    }

    /// One look of one process's scheduler at `now`; how many ticks it took.
    async fn look(keeper: &ClusterCrons, now: chrono::DateTime<Utc>, taken: &AtomicUsize) -> usize {
        let fire = |_| {
            taken.fetch_add(1, Ordering::SeqCst);
            std::future::ready(())
        };
        take_due(keeper, now, fire).await.expect("the due crons")
    }

    /// Three processes' schedulers, on one database, look at once at each of twenty ticks of a
    /// cron that fires every second: each tick is taken exactly once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn schedulers_of_three_processes_take_each_tick_once() {
        let Some(pool) = super::super::assistants::tests::fresh_pool().await else { return };
        let processes: Vec<ClusterCrons> = (0..3).map(|_| ClusterCrons::new(pool.clone())).collect();
        let t0 = Utc.with_ymd_and_hms(2030, 1, 1, 10, 0, 0).single().expect("a valid time");
        let mut cron =
            mnemograph_server::__cluster::conformance::every_second("00000000-0000-7000-8000-0000000000c1");
        cron.next_run_date = stamp(t0);
        processes[0].create(cron).await.expect("create");
        let taken = AtomicUsize::new(0);
        for tick in 0..20 {
            let now = t0 + chrono::Duration::seconds(tick) + chrono::Duration::milliseconds(10);
            let (a, b, c) = tokio::join!(
                look(&processes[0], now, &taken),
                look(&processes[1], now, &taken),
                look(&processes[2], now, &taken)
            );
            let counts = [a, b, c];
            assert_eq!(counts.iter().sum::<usize>(), 1, "tick {tick}: {counts:?}");
        }
        assert_eq!(taken.load(Ordering::SeqCst), 20);
        drop_database(&pool).await;
    }
}
