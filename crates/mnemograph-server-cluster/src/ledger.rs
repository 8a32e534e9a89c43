//! [`Ledger`]: the operations of the API on the cluster's shared records — threads, runs, the
//! queue — and [`RemoteRun`], a run any process of the cluster may be running.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use mnemograph_core::checkpoint::DynCheckpointer;
use serde_json::{json, Map, Value};
use sqlx::Row;
use tokio::sync::{watch, Notify};
use uuid::Uuid;

use super::events::Events;
use super::search;
use super::tables::{self, RUN_COLUMNS, THREAD_COLUMNS};
use crate::queue::mysql::db;
use crate::queue::MySqlRunQueue;
use mnemograph_server::__cluster::ApiModes;
use mnemograph_server::__cluster::AssistantRecord;
use mnemograph_server::__cluster::Frames;
use mnemograph_server::__cluster::GrantRules;
use mnemograph_server::__cluster::QueueLimit;
use mnemograph_server::__cluster::RunOptions;
use mnemograph_server::__cluster::RunView;
use mnemograph_server::__cluster::Stop;
use mnemograph_server::__cluster::{new_thread_id, now, stamp_after, RunRecord, ThreadRecord, ThreadSearch};
use mnemograph_server::__cluster::{
    run_in_progress, run_not_found, thread_busy, thread_exists, thread_not_found,
};
use mnemograph_server::__cluster::{Multitask, RunCreate};
use mnemograph_server::auth::{Grant, Identity};
use mnemograph_server::Limits;
use mnemograph_server::Result;

/// How long deleting a thread waits for its running runs to stop before it deletes their
/// checkpoints anyway.
const STOP_WAIT: Duration = Duration::from_secs(30);

/// Where a run of this process is told to stop.
pub(super) type StopSender = watch::Sender<Option<Stop>>;

/// The cluster's shared records, and this process's view of the runs it is running.
pub(crate) struct Ledger {
    pub(super) queue: MySqlRunQueue,
    pub(super) events: Events,
    /// Stop senders of the runs this process is running, by run id, with the attempt each
    /// belongs to: a process that takes over a run it lost itself runs a second attempt while
    /// the first one winds down, and only the second one's sender is live.
    pub(super) running: Mutex<HashMap<String, (u32, StopSender)>>,
    /// Wakes this process's dispatcher: a run may start.
    pub(super) wake: Notify,
}

/// A run of the cluster, as a route sees it.
#[derive(Clone)]
pub(crate) struct RemoteRun {
    pub(crate) record: RunRecord,
    ledger: Arc<Ledger>,
}

impl RunView for RemoteRun {
    fn record(&self) -> RunRecord {
        self.record.clone()
    }

    /// The run's events after entry `after`.
    fn frames(&self, after: Option<&str>) -> Frames {
        let pool = self.ledger.queue.pool().clone();
        self.ledger.events.frames(pool, self.record.run_id.clone(), after.map(str::to_owned))
    }

    /// Waits for the run to end; its output.
    fn output(&self) -> BoxFuture<'_, Result<Value>> {
        Box::pin(self.ledger.events.output(self.ledger.queue.pool(), &self.record.run_id))
    }

    /// Cancels the run (`interrupt`) when called.
    fn stopper(&self) -> Box<dyn FnOnce() + Send> {
        let run = self.clone();
        Box::new(move || {
            tokio::spawn(async move {
                let (thread_id, run_id) = (&run.record.thread_id, &run.record.run_id);
                // The client that goes away is one that was allowed to stream the run.
                if let Err(e) = run.ledger.cancel(thread_id, run_id, Stop::Interrupt, &Grant::all()).await {
                    tracing::warn!(run_id = %run_id, error = %e, "stopping a run whose client went away failed");
                }
            });
        })
    }
}

impl Ledger {
    pub(super) fn new(queue: MySqlRunQueue, events: Events) -> Self {
        Self { queue, events, running: Mutex::new(HashMap::new()), wake: Notify::new() }
    }

    /// The pool of the cluster's database.
    pub(crate) fn pool(&self) -> &sqlx::MySqlPool {
        self.queue.pool()
    }

    /// A thread `grant` reaches; one it does not is not found, as one that does not exist.
    pub(crate) async fn thread(&self, thread_id: &str, grant: &Grant) -> Result<ThreadRecord> {
        let sql = format!("SELECT {THREAD_COLUMNS} FROM server_threads WHERE thread_id = ?");
        let row = sqlx::query(&sql).bind(thread_id).fetch_optional(self.queue.pool()).await.map_err(db)?;
        row.as_ref()
            .map(tables::thread_of)
            .transpose()
            .map_err(db)?
            .filter(|t| grant.admits(&t.metadata))
            .ok_or_else(|| thread_not_found(thread_id))
    }

    /// Whether `grant` reaches the thread `thread_id` (a thread that does not exist it does not).
    async fn reaches(&self, thread_id: &str, grant: &Grant) -> Result<bool> {
        if grant.filter().is_empty() {
            return Ok(true);
        }
        let row = sqlx::query("SELECT metadata FROM server_threads WHERE thread_id = ?")
            .bind(thread_id)
            .fetch_optional(self.queue.pool())
            .await
            .map_err(db)?;
        let metadata: Option<String> = row.map(|r| r.try_get("metadata")).transpose().map_err(db)?.flatten();
        let metadata = metadata.and_then(|text| serde_json::from_str::<Map<String, Value>>(&text).ok());
        Ok(metadata.is_some_and(|m| grant.admits(&m)))
    }

    /// The threads a search asks for, newest first: filtered and paged in the database.
    pub(crate) async fn search_threads(&self, q: &ThreadSearch) -> Result<Vec<ThreadRecord>> {
        let Some(found) = search::Where::of(q) else { return Ok(Vec::new()) };
        let (limit, offset) = q.page();
        let sql = format!(
            "SELECT {THREAD_COLUMNS} FROM server_threads WHERE {} \
             ORDER BY created_at DESC, thread_id DESC LIMIT {limit} OFFSET {offset}",
            found.sql
        );
        let rows = found.bind(sqlx::query(&sql)).fetch_all(self.queue.pool()).await.map_err(db)?;
        rows.iter().map(tables::thread_of).collect::<sqlx::Result<_>>().map_err(db)
    }

    /// How many threads a search finds, counted in the database.
    pub(crate) async fn count_threads(&self, q: &ThreadSearch) -> Result<usize> {
        let Some(found) = search::Where::of(q) else { return Ok(0) };
        let sql = format!("SELECT COUNT(*) AS n FROM server_threads WHERE {}", found.sql);
        let row = found.bind(sqlx::query(&sql)).fetch_one(self.queue.pool()).await.map_err(db)?;
        let n: i64 = row.try_get("n").map_err(db)?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Writes a new thread record; an existing id is an error unless `keep_existing` and `grant`
    /// reaches it.
    pub(crate) async fn create_thread(
        &self,
        record: ThreadRecord,
        keep_existing: bool,
        grant: &Grant,
    ) -> Result<ThreadRecord> {
        in_tx!(self.queue.pool(), |tx| {
            if tables::insert_thread(tx, &record, false).await? {
                return Ok(Ok(record.clone()));
            }
            if !keep_existing {
                return Ok(Err(thread_exists(&record.thread_id)));
            }
            let existing = tables::thread_in(tx, &record.thread_id, false).await?;
            Ok(match existing {
                Some((t, _)) if grant.admits(&t.metadata) => Ok(t),
                Some(_) => Err(thread_exists(&record.thread_id)),
                None => Err(thread_not_found(&record.thread_id)),
            })
        })
    }

    /// Writes a thread record made elsewhere (a copy).
    pub(crate) async fn insert_thread(&self, record: ThreadRecord) -> Result<ThreadRecord> {
        self.create_thread(record, false, &Grant::all()).await
    }

    /// Merges `metadata` into a thread's, then stamps `grant`'s over it.
    pub(crate) async fn patch_thread(
        &self,
        thread_id: &str,
        metadata: Map<String, Value>,
        grant: &Grant,
    ) -> Result<ThreadRecord> {
        in_tx!(self.queue.pool(), |tx| {
            let thread = tables::thread_in(tx, thread_id, true).await?;
            let Some((mut thread, _)) = thread.filter(|(t, _)| grant.admits(&t.metadata)) else {
                return Ok(Err(thread_not_found(thread_id)));
            };
            thread.metadata.extend(metadata.clone());
            grant.stamp(&mut thread.metadata);
            thread.updated_at = now();
            sqlx::query("UPDATE server_threads SET metadata = ?, updated_at = ? WHERE thread_id = ?")
                .bind(Value::Object(thread.metadata.clone()).to_string())
                .bind(&thread.updated_at)
                .bind(thread_id)
                .execute(&mut **tx)
                .await?;
            Ok(Ok(thread))
        })
    }

    /// Stops the thread's runs, deletes its records, waits for its running runs to stop, then
    /// deletes its checkpoints; when that fails, the thread's record comes back.
    pub(crate) async fn delete_thread(
        &self,
        thread_id: &str,
        grant: &Grant,
        saver: &dyn DynCheckpointer,
    ) -> Result<()> {
        let (record, (ended, asked)) = in_tx!(self.queue.pool(), |tx| {
            let thread = tables::thread_in(tx, thread_id, true).await?;
            let Some((record, _)) = thread.filter(|(t, _)| grant.admits(&t.metadata)) else {
                return Ok(Err(thread_not_found(thread_id)));
            };
            let open = tables::open_runs(tx, thread_id).await?;
            let stopped = tables::stop_open_runs(tx, &open, Stop::Interrupt).await?;
            sqlx::query("DELETE FROM server_threads WHERE thread_id = ?")
                .bind(thread_id)
                .execute(&mut **tx)
                .await?;
            sqlx::query("DELETE FROM server_runs WHERE thread_id = ? AND status <> 'running'")
                .bind(thread_id)
                .execute(&mut **tx)
                .await?;
            Ok(Ok((record, stopped)))
        })?;
        self.announce(&ended, &asked, Stop::Interrupt).await;
        for run_id in &asked {
            let stopped =
                tokio::time::timeout(STOP_WAIT, self.events.output(self.queue.pool(), run_id)).await;
            if stopped.is_err() {
                tracing::warn!(run_id = %run_id, "a run of a deleted thread did not stop in time");
            }
        }
        sqlx::query("DELETE FROM server_runs WHERE thread_id = ?")
            .bind(thread_id)
            .execute(self.queue.pool())
            .await
            .map_err(db)?;
        if let Err(e) = saver.delete_thread(thread_id).await {
            // The checkpoints are still there: the thread's record comes back (idle, its runs
            // gone), so that the thread stays reachable and the delete can be asked again.
            let record = record.without_runs();
            if let Err(restore) = self.insert_thread(record).await {
                tracing::warn!(thread_id, error = %restore, "restoring the record of a thread not deleted failed");
            }
            return Err(mnemograph_core::Error::from(e).into());
        }
        Ok(())
    }

    /// Ends the streams of runs that ended before they started, and tells the workers of running
    /// runs to stop them.
    async fn announce(&self, ended: &[String], asked: &[String], how: Stop) {
        for run_id in ended {
            if let Err(e) = self.events.end(run_id, "interrupted", &Value::Null).await {
                tracing::warn!(run_id = %run_id, error = %e, "ending a cancelled run's stream failed");
            }
        }
        for run_id in asked {
            self.events.stop(run_id, how).await;
        }
    }

    pub(crate) async fn runs_of(&self, thread_id: &str, grant: &Grant) -> Result<Vec<RunRecord>> {
        self.thread(thread_id, grant).await?;
        let sql = format!("SELECT {RUN_COLUMNS} FROM server_runs WHERE thread_id = ? ORDER BY seq DESC");
        let rows = sqlx::query(&sql).bind(thread_id).fetch_all(self.queue.pool()).await.map_err(db)?;
        rows.iter().map(tables::run_of).collect::<sqlx::Result<_>>().map_err(db)
    }

    pub(crate) async fn run(
        self: &Arc<Self>,
        thread_id: &str,
        run_id: &str,
        grant: &Grant,
    ) -> Result<RemoteRun> {
        if !self.reaches(thread_id, grant).await? {
            return Err(run_not_found(run_id));
        }
        let record = tables::run(self.queue.pool(), run_id)
            .await?
            .filter(|r| r.thread_id == thread_id)
            .ok_or_else(|| run_not_found(run_id))?;
        Ok(RemoteRun { record, ledger: self.clone() })
    }

    /// The runs whose status is one of `statuses` (`pending`, `running`), oldest first, on
    /// every thread `grant` reaches.
    pub(crate) async fn open_runs(&self, statuses: &[&str], grant: &Grant) -> Result<Vec<RunRecord>> {
        let statuses: Vec<&str> =
            statuses.iter().copied().filter(|s| matches!(*s, "pending" | "running")).collect();
        if statuses.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; statuses.len()].join(", ");
        let sql = format!("SELECT {RUN_COLUMNS} FROM server_runs WHERE status IN ({marks}) ORDER BY seq");
        let rows = statuses
            .iter()
            .fold(sqlx::query(&sql), |q, s| q.bind(*s))
            .fetch_all(self.queue.pool())
            .await
            .map_err(db)?;
        let runs: Vec<RunRecord> =
            rows.iter().map(tables::run_of).collect::<sqlx::Result<_>>().map_err(db)?;
        let mut reached: HashMap<String, bool> = HashMap::new();
        let mut kept = Vec::with_capacity(runs.len());
        for run in runs {
            let reaches = match reached.get(&run.thread_id) {
                Some(known) => *known,
                None => {
                    let known = self.reaches(&run.thread_id, grant).await?;
                    reached.insert(run.thread_id.clone(), known);
                    known
                }
            };
            if reaches {
                kept.push(run);
            }
        }
        Ok(kept)
    }

    pub(crate) async fn delete_run(&self, thread_id: &str, run_id: &str, grant: &Grant) -> Result<()> {
        if !self.reaches(thread_id, grant).await? {
            return Err(run_not_found(run_id));
        }
        let record = tables::run(self.queue.pool(), run_id)
            .await?
            .filter(|r| r.thread_id == thread_id)
            .ok_or_else(|| run_not_found(run_id))?;
        if !record.is_finished() {
            return Err(run_in_progress(run_id));
        }
        sqlx::query("DELETE FROM server_runs WHERE run_id = ?")
            .bind(run_id)
            .execute(self.queue.pool())
            .await
            .map_err(db)?;
        Ok(())
    }

    /// Queues a run of the graph `graph_id` as `assistant`, by the thread's
    /// state and the request's `multitask_strategy`; refuses it
    /// when as many runs as `limits` allows already wait on the thread behind its first. The
    /// thread must be one `grant` reaches; a thread made for the run, and the run's metadata, are
    /// stamped with it; the run runs as `user`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn create_run(
        self: &Arc<Self>,
        (graph_id, assistant): (&str, &AssistantRecord),
        thread_id: Option<&str>,
        (body, modes, options): (&RunCreate, ApiModes, RunOptions),
        strategy: Multitask,
        limits: &Limits,
        grant: &Grant,
        user: Option<&Identity>,
    ) -> Result<RemoteRun> {
        let run_id = Uuid::now_v7().to_string();
        let creates = thread_id.is_none() || body.if_not_exists.as_deref() == Some("create");
        let (thread_id, temporary) = match thread_id {
            Some(id) => (id.to_owned(), false),
            None => (Uuid::now_v7().to_string(), options.delete_on_completion),
        };
        let (run_id, thread_id) = (run_id.as_str(), thread_id.as_str());
        let (record, ended, asked) = in_tx!(self.queue.pool(), |tx| {
            let thread = match tables::thread_in(tx, thread_id, true).await? {
                Some((thread, _)) if grant.admits(&thread.metadata) => thread,
                Some(_) => return Ok(Err(thread_not_found(thread_id))),
                None if creates => {
                    if let Err(e) = new_thread_id(Some(thread_id.to_owned())) {
                        return Ok(Err(e));
                    }
                    let mut owned = Map::new();
                    grant.stamp(&mut owned);
                    let thread = ThreadRecord::new(thread_id.to_owned(), owned);
                    tables::insert_thread(tx, &thread, temporary).await?;
                    thread
                }
                None => return Ok(Err(thread_not_found(thread_id))),
            };
            let open = tables::open_runs(tx, thread_id).await?;
            if !open.is_empty() && strategy == Multitask::Reject {
                return Ok(Err(thread_busy()));
            }
            if !open.is_empty() && strategy == Multitask::Enqueue {
                if let Err(full) = limits.check_queue(open.len() - 1) {
                    return Ok(Err(full));
                }
            }
            let stopped = match strategy {
                Multitask::Interrupt | Multitask::Rollback if !open.is_empty() => {
                    let how = if strategy == Multitask::Rollback { Stop::Rollback } else { Stop::Interrupt };
                    tables::stop_open_runs(tx, &open, how).await?
                }
                _ => (Vec::new(), Vec::new()),
            };
            let mut metadata = thread.metadata.clone();
            metadata.insert("graph_id".into(), graph_id.into());
            metadata.insert("assistant_id".into(), assistant.assistant_id.clone().into());
            sqlx::query(
                "UPDATE server_threads SET metadata = ?, status = 'busy', updated_at = ? WHERE thread_id = ?",
            )
            .bind(Value::Object(metadata.clone()).to_string())
            .bind(now())
            .bind(thread_id)
            .execute(&mut **tx)
            .await?;
            let mut run_metadata = body.run_metadata(assistant, &metadata);
            grant.stamp(&mut run_metadata);
            let assistant_id = &assistant.assistant_id;
            let mut record =
                body.run_record(run_id, thread_id, assistant_id, run_metadata.clone(), modes, strategy);
            record.kwargs["temporary"] = temporary.into();
            if !options.delay.is_zero() {
                // LangGraph dates a delayed run at its start; the queue starts no run before it.
                record.created_at = stamp_after(options.delay);
            }
            run_metadata.insert("run_id".into(), run_id.into());
            let payload = json!({
                "graph_id": graph_id,
                "body": body,
                "metadata": run_metadata,
                "auth_user": user.map(Identity::to_json),
            });
            sqlx::query(
                "INSERT INTO server_runs (run_id, thread_id, status, payload, created_at, updated_at, \
                         assistant_id, metadata, kwargs, multitask_strategy) \
                         VALUES (?, ?, 'pending', ?, UTC_TIMESTAMP(6) + INTERVAL ? MICROSECOND, UTC_TIMESTAMP(6), \
                         ?, ?, ?, ?)",
            )
            .bind(run_id)
            .bind(thread_id)
            .bind(payload.to_string())
            .bind(u64::try_from(options.delay.as_micros()).unwrap_or(u64::MAX))
            .bind(&record.assistant_id)
            .bind(Value::Object(record.metadata.clone()).to_string())
            .bind(record.kwargs.to_string())
            .bind(&record.multitask_strategy)
            .execute(&mut **tx)
            .await?;
            Ok(Ok((record, stopped.0, stopped.1)))
        })?;
        let how = if strategy == Multitask::Rollback { Stop::Rollback } else { Stop::Interrupt };
        self.announce(&ended, &asked, how).await;
        self.events.wake().await;
        Ok(RemoteRun { record, ledger: self.clone() })
    }

    /// Asks a run to stop: one not started ends now, one running is told to stop.
    pub(crate) async fn cancel(
        self: &Arc<Self>,
        thread_id: &str,
        run_id: &str,
        how: Stop,
        grant: &Grant,
    ) -> Result<RemoteRun> {
        if !self.reaches(thread_id, grant).await? {
            return Err(run_not_found(run_id));
        }
        let (record, ended, asked) = in_tx!(self.queue.pool(), |tx| {
            let sql = format!("SELECT {RUN_COLUMNS} FROM server_runs WHERE run_id = ? FOR UPDATE");
            let Some(row) = sqlx::query(&sql).bind(run_id).fetch_optional(&mut **tx).await? else {
                return Ok(Err(run_not_found(run_id)));
            };
            let record = tables::run_of(&row)?;
            if record.thread_id != thread_id {
                return Ok(Err(run_not_found(run_id)));
            }
            let status = row.try_get::<String, _>("status")?;
            let open = if record.is_finished() { Vec::new() } else { vec![(run_id.to_owned(), status)] };
            let (ended, asked) = tables::stop_open_runs(tx, &open, how).await?;
            Ok(Ok((record, ended, asked)))
        })?;
        self.announce(&ended, &asked, how).await;
        if !ended.is_empty() {
            // The thread may be idle now, or its next run may start.
            self.release_thread(thread_id).await?;
            self.events.wake().await;
        }
        Ok(RemoteRun { record, ledger: self.clone() })
    }

    /// Marks a thread with no open run as no longer busy.
    async fn release_thread(&self, thread_id: &str) -> Result<()> {
        sqlx::query(
            "UPDATE server_threads SET status = 'idle' WHERE thread_id = ? AND status = 'busy' AND NOT EXISTS \
             (SELECT 1 FROM server_runs WHERE thread_id = ? AND status IN ('pending', 'running'))",
        )
        .bind(thread_id)
        .bind(thread_id)
        .execute(self.queue.pool())
        .await
        .map_err(db)?;
        Ok(())
    }

    /// Delivers a stop request to a run of this process.
    pub(super) fn deliver_stop(&self, run_id: &str, how: Stop) {
        let running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, stop)) = running.get(run_id) {
            stop.send_replace(Some(how));
        }
    }
}
