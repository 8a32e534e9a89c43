//! [`MySqlRunQueue`]: the run queue in two MySQL/MariaDB tables, claimed with `FOR UPDATE SKIP
//! LOCKED` so that workers never wait on each other's claims.

use std::time::Duration;

use mnemograph_checkpoint_mysql::LockError;
use sqlx::mysql::{MySqlDatabaseError, MySqlPool, MySqlPoolOptions};
use sqlx::{MySql, Row, Transaction};

use super::{Claim, Finished, Lease, QueuedRun};
use mnemograph_server::{Result, ServerError};

/// How many times a claim, renewal or finish is retried after the server rolled it back to break
/// a deadlock.
pub(crate) const DEADLOCK_RETRIES: usize = 8;

/// The isolation of the queue's sessions. A thread's row, locked by every transaction that
/// decides about the thread's runs, is what orders those transactions; gap locks would only make
/// unrelated threads' transactions deadlock.
const READ_COMMITTED: &str = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

const SETUP: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS server_runs (
        seq BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
        run_id VARCHAR(64) NOT NULL,
        thread_id VARCHAR(64) NOT NULL,
        status VARCHAR(16) NOT NULL,
        payload LONGTEXT NOT NULL,
        worker VARCHAR(128) NULL,
        lease_until DATETIME(6) NULL,
        attempt INT UNSIGNED NOT NULL DEFAULT 0,
        created_at DATETIME(6) NOT NULL,
        updated_at DATETIME(6) NOT NULL,
        assistant_id VARCHAR(64) NOT NULL DEFAULT '',
        metadata LONGTEXT NULL,
        kwargs LONGTEXT NULL,
        multitask_strategy VARCHAR(16) NOT NULL DEFAULT 'enqueue',
        output LONGTEXT NULL,
        stop_requested VARCHAR(16) NULL,
        UNIQUE KEY run_id (run_id),
        KEY by_status (status, seq),
        KEY by_thread (thread_id, seq),
        KEY open_by_thread (thread_id, status, seq)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
    "CREATE TABLE IF NOT EXISTS server_threads (
        thread_id VARCHAR(64) NOT NULL PRIMARY KEY,
        active_run VARCHAR(64) NULL,
        metadata LONGTEXT NULL,
        status VARCHAR(16) NOT NULL DEFAULT 'idle',
        state_values LONGTEXT NULL,
        interrupts LONGTEXT NULL,
        error LONGTEXT NULL,
        temporary TINYINT NOT NULL DEFAULT 0,
        created_at VARCHAR(40) NOT NULL DEFAULT '',
        updated_at VARCHAR(40) NOT NULL DEFAULT ''
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4",
];

/// Indexes that tables made before them lack: `(table, name, columns)`. A claim looks for an
/// older open run of each candidate's thread; `open_by_thread` reaches those without reading the
/// thread's ended runs.
const INDEXES: [(&str, &str, &str); 3] = [
    ("server_runs", "open_by_thread", "(thread_id, status, seq)"),
    // The sweep's: finished runs past their retention, threads past their TTL.
    ("server_runs", "by_status_age", "(status, updated_at)"),
    ("server_threads", "by_update", "(updated_at)"),
];

/// MySQL's and MariaDB's error number for an index name already taken.
const DUPLICATE_KEY_NAME: u16 = 1061;

/// How many connections lease renewals have to themselves.
const LEASE_CONNECTIONS: u32 = 2;

/// The run queue on MySQL or MariaDB (10.6 or later, for `SKIP LOCKED`).
///
/// `server_runs` holds every queued run in queue order (`seq`) with its status (`pending`,
/// `running`, `success`, `error`, `interrupted`), the worker holding it and until when;
/// `server_threads` names each thread's run in progress. Both also hold what the API shows of a
/// thread and a run, for the servers of a cluster. A claim takes the oldest open run of each
/// thread that may start, oldest first, locking those runs and their threads' rows in one
/// statement and skipping rows another transaction holds, so runs queued behind a busy thread
/// never hold up another thread's runs.
#[derive(Debug, Clone)]
pub struct MySqlRunQueue {
    pool: MySqlPool,
    /// Renewals' own connections: a pool busy with claims, records and reads cannot make a
    /// worker miss its renewals and lose its runs.
    lease_pool: MySqlPool,
}

pub(crate) fn db(e: sqlx::Error) -> ServerError {
    ServerError::Queue(Box::new(e))
}

/// Whether the server refused a statement over a lock (a deadlock, or a lock wait that ran
/// out): the transaction, rolled back, may run again.
pub(crate) fn is_deadlock(e: &sqlx::Error) -> bool {
    LockError::of(e).is_some()
}

impl MySqlRunQueue {
    /// Connects to the database of `url` (`mysql://user:pass@host:port/db`).
    ///
    /// # Errors
    /// [`ServerError::Queue`] when the server cannot be reached.
    pub async fn connect(url: &str) -> Result<Self> {
        let pool = read_committed(16).connect(url).await.map_err(db)?;
        Ok(Self::with_pool(pool))
    }

    /// A queue on an existing pool, whose sessions should run at `READ COMMITTED` (as
    /// [`MySqlRunQueue::connect`] sets them): under `REPEATABLE READ`, the range reads of claims
    /// take gap locks that collide with the inserts of runs on neighbouring threads. Lease
    /// renewals get a small pool of their own on the same server.
    pub fn with_pool(pool: MySqlPool) -> Self {
        let options = (*pool.connect_options()).clone();
        let lease_pool = read_committed(LEASE_CONNECTIONS).connect_lazy_with(options);
        Self { pool, lease_pool }
    }

    /// Renews leases on `pool` instead of the small pool of its own that the queue opens.
    #[must_use]
    pub fn with_lease_pool(mut self, pool: MySqlPool) -> Self {
        self.lease_pool = pool;
        self
    }

    /// The queue's pool.
    pub(crate) fn pool(&self) -> &MySqlPool {
        &self.pool
    }

    /// Creates the tables when missing.
    ///
    /// # Errors
    /// [`ServerError::Queue`].
    pub async fn setup(&self) -> Result<()> {
        for sql in SETUP {
            sqlx::query(sql).execute(&self.pool).await.map_err(db)?;
        }
        for (table, name, columns) in INDEXES {
            self.add_index(table, name, columns).await?;
        }
        Ok(())
    }

    /// Adds an index to a table that lacks it. MySQL has no `CREATE INDEX IF NOT EXISTS`, so the
    /// catalogue is asked first; a process adding the same index meanwhile makes the `ALTER`
    /// fail with a duplicate name, which is success here.
    async fn add_index(&self, table: &str, name: &str, columns: &str) -> Result<()> {
        let present = sqlx::query(
            "SELECT 1 FROM information_schema.statistics \
             WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ? LIMIT 1",
        )
        .bind(table)
        .bind(name)
        .fetch_optional(&self.pool)
        .await
        .map_err(db)?
        .is_some();
        if present {
            return Ok(());
        }
        let added =
            sqlx::query(&format!("ALTER TABLE {table} ADD INDEX {name} {columns}")).execute(&self.pool).await;
        match added {
            Err(sqlx::Error::Database(e))
                if e.try_downcast_ref::<MySqlDatabaseError>().map(MySqlDatabaseError::number)
                    == Some(DUPLICATE_KEY_NAME) =>
            {
                Ok(())
            }
            other => other.map(|_| ()).map_err(db),
        }
    }

    /// Queues `run` behind the runs already queued.
    ///
    /// # Errors
    /// [`ServerError::Queue`], for instance for a run id already queued.
    pub async fn enqueue(&self, run: &QueuedRun) -> Result<()> {
        let mut tx = self.pool.begin().await.map_err(db)?;
        sqlx::query("INSERT IGNORE INTO server_threads (thread_id) VALUES (?)")
            .bind(&run.thread_id)
            .execute(&mut *tx)
            .await
            .map_err(db)?;
        sqlx::query(
            "INSERT INTO server_runs (run_id, thread_id, status, payload, created_at, updated_at) \
             VALUES (?, ?, 'pending', ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))",
        )
        .bind(&run.run_id)
        .bind(&run.thread_id)
        .bind(run.payload.to_string())
        .execute(&mut *tx)
        .await
        .map_err(db)?;
        tx.commit().await.map_err(db)
    }

    /// Takes the oldest run that may start now — pending, or running under a lease that ran out
    /// — for `worker`, under `lease`; `None` when no run may start.
    ///
    /// # Errors
    /// [`ServerError::Queue`].
    pub async fn claim(&self, worker: &str, lease: Lease) -> Result<Option<Claim>> {
        Ok(self.claim_many(worker, lease, 1).await?.pop())
    }

    /// Takes up to `max` runs that may start now, oldest first, in one transaction: a worker
    /// with room for several runs pays one commit for all of them.
    ///
    /// # Errors
    /// [`ServerError::Queue`].
    pub async fn claim_many(&self, worker: &str, lease: Lease, max: usize) -> Result<Vec<Claim>> {
        let mut attempt = 0;
        loop {
            let mut tx = self.pool.begin().await.map_err(db)?;
            match claim_in(&mut tx, worker, lease, max).await {
                Ok(claims) => {
                    tx.commit().await.map_err(db)?;
                    return Ok(claims);
                }
                Err(e) if is_deadlock(&e) && attempt < DEADLOCK_RETRIES => {
                    attempt += 1;
                    let _ = tx.rollback().await;
                }
                Err(e) => return Err(db(e)),
            }
        }
    }

    /// Extends `claim`'s lease; `false` when the worker no longer holds the run (it was taken
    /// over, or finished): the worker must then stop working on it.
    ///
    /// # Errors
    /// [`ServerError::Queue`].
    pub async fn renew(&self, claim: &Claim, lease: Lease) -> Result<bool> {
        let mut attempt = 0;
        loop {
            let renewed = sqlx::query(
                "UPDATE server_runs SET lease_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, \
                 updated_at = UTC_TIMESTAMP(6) WHERE run_id = ? AND worker = ? AND attempt = ? AND status = 'running'",
            )
            .bind(lease.ttl.as_micros() as u64)
            .bind(&claim.run.run_id)
            .bind(&claim.worker)
            .bind(claim.attempt)
            .execute(&self.lease_pool)
            .await;
            match renewed {
                Ok(done) => return Ok(done.rows_affected() == 1),
                Err(e) if is_deadlock(&e) && attempt < DEADLOCK_RETRIES => attempt += 1,
                Err(e) => return Err(db(e)),
            }
        }
    }

    /// Records how `claim`'s run ended and frees its thread for the next run; `false` (and
    /// nothing written) when the worker no longer held it.
    ///
    /// # Errors
    /// [`ServerError::Queue`].
    pub async fn finish(&self, claim: &Claim, how: Finished) -> Result<bool> {
        let mut attempt = 0;
        loop {
            let mut tx = self.pool.begin().await.map_err(db)?;
            match finish_in(&mut tx, claim, how).await {
                Ok(true) => {
                    tx.commit().await.map_err(db)?;
                    return Ok(true);
                }
                Ok(false) => {
                    tx.rollback().await.map_err(db)?;
                    return Ok(false);
                }
                // A claim deciding about the same thread can deadlock with this update; the
                // server rolls one back, and this one simply runs again.
                Err(e) if is_deadlock(&e) && attempt < DEADLOCK_RETRIES => {
                    attempt += 1;
                    let _ = tx.rollback().await;
                }
                Err(e) => return Err(db(e)),
            }
        }
    }

    /// Cancels a run that has not started; `false` when it already started or ended.
    ///
    /// # Errors
    /// [`ServerError::Queue`].
    pub async fn cancel_pending(&self, run_id: &str) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE server_runs SET status = 'interrupted', updated_at = UTC_TIMESTAMP(6) \
             WHERE run_id = ? AND status = 'pending'",
        )
        .bind(run_id)
        .execute(&self.pool)
        .await
        .map_err(db)?;
        Ok(done.rows_affected() == 1)
    }

    /// A run's status, `None` for a run never queued.
    ///
    /// # Errors
    /// [`ServerError::Queue`].
    pub async fn status(&self, run_id: &str) -> Result<Option<String>> {
        let row = sqlx::query("SELECT status FROM server_runs WHERE run_id = ?")
            .bind(run_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(db)?;
        row.map(|r| r.try_get::<String, _>("status")).transpose().map_err(db)
    }
}

/// Pool options whose sessions run at `READ COMMITTED`.
fn read_committed(connections: u32) -> MySqlPoolOptions {
    MySqlPoolOptions::new()
        .max_connections(connections)
        .acquire_timeout(Duration::from_secs(30))
        .after_connect(|conn, _| {
            Box::pin(async move {
                sqlx::query(READ_COMMITTED).execute(conn).await?;
                Ok(())
            })
        })
}

/// Marks the run ended and frees its thread, inside a transaction; `false` when the worker no
/// longer held the run.
pub(crate) async fn finish_in(
    tx: &mut Transaction<'_, MySql>,
    claim: &Claim,
    how: Finished,
) -> sqlx::Result<bool> {
    let done = sqlx::query(
        "UPDATE server_runs SET status = ?, worker = NULL, lease_until = NULL, updated_at = UTC_TIMESTAMP(6) \
         WHERE run_id = ? AND worker = ? AND attempt = ? AND status = 'running'",
    )
    .bind(how.status())
    .bind(&claim.run.run_id)
    .bind(&claim.worker)
    .bind(claim.attempt)
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() != 1 {
        return Ok(false);
    }
    sqlx::query("UPDATE server_threads SET active_run = NULL WHERE thread_id = ? AND active_run = ?")
        .bind(&claim.run.thread_id)
        .bind(&claim.run.run_id)
        .execute(&mut **tx)
        .await?;
    Ok(true)
}

/// Up to `max` claims, inside one transaction.
///
/// One locking read finds them all: the oldest open run of each thread, when it is pending on a
/// thread with no run in progress or running under a lease that ran out. A run dated later than
/// now (a delayed run, dated at its start as LangGraph dates it) neither starts nor holds up the
/// runs queued after it until then. Runs whose rows, or
/// whose thread's row, another transaction holds are skipped, not waited for. Each one found is
/// checked once more for an older open run with a read that waits for locks, as the first
/// read's check may have passed over a row another transaction held.
async fn claim_in(
    tx: &mut Transaction<'_, MySql>,
    worker: &str,
    lease: Lease,
    max: usize,
) -> sqlx::Result<Vec<Claim>> {
    let rows = sqlx::query(
        "SELECT r.seq, r.run_id, r.thread_id, r.payload, r.attempt \
         FROM server_runs r JOIN server_threads t ON t.thread_id = r.thread_id \
         WHERE r.status IN ('pending', 'running') \
         AND ((r.status = 'pending' AND t.active_run IS NULL AND r.created_at <= UTC_TIMESTAMP(6)) \
              OR (r.status = 'running' AND r.lease_until < UTC_TIMESTAMP(6))) \
         AND NOT EXISTS (SELECT 1 FROM server_runs o WHERE o.thread_id = r.thread_id \
                         AND o.status IN ('pending', 'running') AND o.seq < r.seq \
                         AND (o.status = 'running' OR o.created_at <= UTC_TIMESTAMP(6))) \
         ORDER BY r.seq LIMIT ? FOR UPDATE SKIP LOCKED",
    )
    .bind(max as u64)
    .fetch_all(&mut **tx)
    .await?;
    let mut claims = Vec::with_capacity(rows.len());
    for row in rows {
        let seq: i64 = row.try_get("seq")?;
        let run_id: String = row.try_get("run_id")?;
        let thread_id: String = row.try_get("thread_id")?;
        // A locking read of the thread's older open runs: it waits for a transaction deciding
        // about one of them, so an older run held by a claim or a cancellation that then leaves
        // it waiting is not overlooked.
        let older = sqlx::query(
            "SELECT seq FROM server_runs WHERE thread_id = ? AND status IN ('pending', 'running') AND seq < ? \
             AND (status = 'running' OR created_at <= UTC_TIMESTAMP(6)) LIMIT 1 LOCK IN SHARE MODE",
        )
        .bind(&thread_id)
        .bind(seq)
        .fetch_optional(&mut **tx)
        .await?;
        if older.is_some() {
            continue;
        }
        let attempt: u32 = row.try_get::<u32, _>("attempt")? + 1;
        sqlx::query(
            "UPDATE server_runs SET status = 'running', worker = ?, attempt = ?, \
             lease_until = UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, updated_at = UTC_TIMESTAMP(6) WHERE seq = ?",
        )
        .bind(worker)
        .bind(attempt)
        .bind(lease.ttl.as_micros() as u64)
        .bind(seq)
        .execute(&mut **tx)
        .await?;
        sqlx::query("UPDATE server_threads SET active_run = ? WHERE thread_id = ?")
            .bind(&run_id)
            .bind(&thread_id)
            .execute(&mut **tx)
            .await?;
        let payload: String = row.try_get("payload")?;
        let payload = serde_json::from_str(&payload).unwrap_or(serde_json::Value::Null);
        claims.push(Claim {
            run: QueuedRun { run_id, thread_id, payload },
            worker: worker.to_owned(),
            attempt,
        });
    }
    Ok(claims)
}
