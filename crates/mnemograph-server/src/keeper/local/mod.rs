//! [`LocalRecords`]: the records of threads and runs kept in this process, and its runs run here.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;
use mnemograph_core::checkpoint::DynCheckpointer;
use serde_json::{Map, Value};
use tokio::time::Instant;

mod assistants;
mod crons;
mod runs;

pub(crate) use assistants::LocalAssistants;
pub(crate) use crons::LocalCrons;

use super::{NewRun, RecordKeeper};
use crate::auth::Grant;
use crate::error::{run_in_progress, run_not_found, thread_exists, thread_not_found, Result};
use crate::handle::RunRef;
use crate::records::{now, stamp_before, RunRecord, ThreadRecord, ThreadSearch};
use crate::retention::Retention;
use crate::run::{RunHandle, Stop};
use crate::thread_table::ThreadTable;
use crate::webhook::Webhooks;

/// The records of this process; clones share them.
#[derive(Clone)]
pub(crate) struct LocalRecords(Arc<Local>);

struct Local {
    saver: Arc<dyn DynCheckpointer>,
    /// How long finished runs and idle threads stay, and how many events a run keeps.
    retention: Retention,
    /// How long a finished run's events stay readable (join stream, reconnection).
    event_retention: Duration,
    /// Where runs that name a webhook have their final record posted.
    webhooks: Webhooks,
    tables: Mutex<Tables>,
}

#[derive(Default)]
struct Tables {
    threads: ThreadTable,
    runs: HashMap<String, Arc<RunHandle>>,
    /// Threads created for a stateless run, deleted when it ends.
    temporary: HashSet<String>,
}

impl LocalRecords {
    /// Records of runs checkpointed in `saver`, kept as `retention` says, their events readable
    /// for `event_retention` after they end, their webhooks sent by `webhooks`.
    pub(crate) fn new(
        saver: Arc<dyn DynCheckpointer>,
        retention: Retention,
        event_retention: Duration,
        webhooks: Webhooks,
    ) -> Self {
        Self(Arc::new(Local { saver, retention, event_retention, webhooks, tables: Mutex::default() }))
    }
}

impl RecordKeeper for LocalRecords {
    fn thread<'a>(&'a self, thread_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<ThreadRecord>> {
        Box::pin(async move {
            self.0
                .tables()
                .threads
                .get(thread_id)
                .filter(|t| grant.admits(&t.metadata))
                .cloned()
                .ok_or_else(|| thread_not_found(thread_id))
        })
    }

    fn search_threads<'a>(&'a self, q: &'a ThreadSearch) -> BoxFuture<'a, Result<Vec<ThreadRecord>>> {
        Box::pin(async move { Ok(self.0.tables().threads.search(q)) })
    }

    fn count_threads<'a>(&'a self, q: &'a ThreadSearch) -> BoxFuture<'a, Result<usize>> {
        Box::pin(async move { Ok(self.0.tables().threads.count(q)) })
    }

    fn create_thread<'a>(
        &'a self,
        record: ThreadRecord,
        do_nothing: bool,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<ThreadRecord>> {
        Box::pin(async move {
            let mut tables = self.0.tables();
            if let Some(existing) = tables.threads.get(&record.thread_id) {
                return match do_nothing && grant.admits(&existing.metadata) {
                    true => Ok(existing.clone()),
                    false => Err(thread_exists(&record.thread_id)),
                };
            }
            tables.threads.insert(record.thread_id.clone(), record.clone());
            Ok(record)
        })
    }

    fn insert_thread(&self, record: ThreadRecord) -> BoxFuture<'_, Result<ThreadRecord>> {
        Box::pin(async move {
            self.0.tables().threads.insert(record.thread_id.clone(), record.clone());
            Ok(record)
        })
    }

    fn patch_thread<'a>(
        &'a self,
        thread_id: &'a str,
        metadata: Map<String, Value>,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<ThreadRecord>> {
        Box::pin(async move {
            let mut tables = self.0.tables();
            let thread = tables
                .threads
                .get_mut(thread_id)
                .filter(|t| grant.admits(&t.metadata))
                .ok_or_else(|| thread_not_found(thread_id))?;
            thread.metadata.extend(metadata);
            grant.stamp(&mut thread.metadata);
            thread.updated_at = now();
            Ok(thread.clone())
        })
    }

    fn delete_thread<'a>(&'a self, thread_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.0.delete_thread(thread_id, grant))
    }

    fn runs_of<'a>(&'a self, thread_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<Vec<RunRecord>>> {
        Box::pin(async move {
            let tables = self.0.tables();
            if !tables.threads.get(thread_id).is_some_and(|t| grant.admits(&t.metadata)) {
                return Err(thread_not_found(thread_id));
            }
            let now = Instant::now();
            let mut runs: Vec<RunRecord> = tables
                .runs
                .values()
                .filter(|r| r.is_on(thread_id) && !self.0.run_expired(r, now))
                .map(|r| r.record())
                .collect();
            runs.sort_by(|a, b| b.run_id.cmp(&a.run_id));
            Ok(runs)
        })
    }

    fn run<'a>(
        &'a self,
        thread_id: &'a str,
        run_id: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<RunRef>> {
        Box::pin(async move { self.0.run(thread_id, run_id, grant).map(RunRef::new) })
    }

    fn open_runs<'a>(
        &'a self,
        statuses: &'a [&'a str],
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<Vec<RunRecord>>> {
        Box::pin(async move {
            let tables = self.0.tables();
            let mut runs: Vec<RunRecord> = tables
                .runs
                .values()
                .map(|r| r.record())
                .filter(|r| !r.is_finished() && statuses.contains(&r.status))
                .filter(|r| tables.threads.get(&r.thread_id).is_some_and(|t| grant.admits(&t.metadata)))
                .collect();
            runs.sort_by(|a, b| a.run_id.cmp(&b.run_id));
            Ok(runs)
        })
    }

    fn delete_run<'a>(
        &'a self,
        thread_id: &'a str,
        run_id: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let run = self.0.run(thread_id, run_id, grant)?;
            if !run.record().is_finished() {
                return Err(run_in_progress(run_id));
            }
            self.0.tables().runs.remove(run_id);
            Ok(())
        })
    }

    fn create_run<'a>(&'a self, new: NewRun<'a>) -> BoxFuture<'a, Result<RunRef>> {
        Box::pin(async move { self.0.create_run(new).map(RunRef::new) })
    }

    fn cancel<'a>(
        &'a self,
        thread_id: &'a str,
        run_id: &'a str,
        how: Stop,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<RunRef>> {
        Box::pin(async move { self.0.cancel(thread_id, run_id, how, grant).map(RunRef::new) })
    }

    fn sweep(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.0.sweep())
    }
}

impl Local {
    fn tables(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops a thread's runs and deletes it with its checkpoints and runs. When the checkpoints
    /// cannot be deleted, the thread's record comes back (idle, its runs gone), so that the thread
    /// stays reachable and the delete can be asked again.
    async fn delete_thread(&self, thread_id: &str, grant: &Grant) -> Result<()> {
        let (record, temporary, runs) = {
            let mut tables = self.tables();
            let Some(record) = tables.threads.remove(thread_id) else {
                return Err(thread_not_found(thread_id));
            };
            if !grant.admits(&record.metadata) {
                tables.threads.insert(thread_id.to_owned(), record);
                return Err(thread_not_found(thread_id));
            }
            let temporary = tables.temporary.remove(thread_id);
            let ids: Vec<String> =
                tables.runs.iter().filter(|(_, r)| r.is_on(thread_id)).map(|(k, _)| k.clone()).collect();
            let runs: Vec<Arc<RunHandle>> = ids.iter().filter_map(|id| tables.runs.remove(id)).collect();
            (record, temporary, runs)
        };
        for run in &runs {
            run.request_stop(Stop::Interrupt);
        }
        for run in &runs {
            run.wait().await;
        }
        if let Err(e) = self.saver.delete_thread(thread_id).await {
            let mut tables = self.tables();
            let record = record.without_runs();
            tables.threads.insert(thread_id.to_owned(), record);
            if temporary {
                tables.temporary.insert(thread_id.to_owned());
            }
            return Err(mnemograph_core::Error::from(e).into());
        }
        Ok(())
    }

    /// A run of this process on a thread `grant` reaches, unless it outlived its retention (then
    /// it is dropped at once, and is not found as a run that never was); its events are forgotten
    /// past theirs.
    fn run(&self, thread_id: &str, run_id: &str, grant: &Grant) -> Result<Arc<RunHandle>> {
        let mut tables = self.tables();
        if !tables.threads.get(thread_id).is_some_and(|t| grant.admits(&t.metadata)) {
            return Err(run_not_found(run_id));
        }
        let run = tables
            .runs
            .get(run_id)
            .filter(|r| r.is_on(thread_id))
            .cloned()
            .ok_or_else(|| run_not_found(run_id))?;
        let now = Instant::now();
        if self.run_expired(&run, now) {
            tables.runs.remove(run_id);
            return Err(run_not_found(run_id));
        }
        if run.finished_for(now).is_some_and(|age| age >= self.event_retention) {
            run.forget_events();
        }
        Ok(run)
    }

    /// Whether a run finished longer ago than the run retention.
    fn run_expired(&self, run: &RunHandle, now: Instant) -> bool {
        run.finished_for(now).is_some_and(|age| age >= self.retention.runs)
    }

    /// Frees what outlived its retention: finished runs past the run retention (record, handle
    /// and events), the events of finished runs past the event retention, and, with a thread TTL,
    /// the threads not updated within it that no run holds or waits for, with their runs and
    /// checkpoints.
    async fn sweep(&self) {
        let now = Instant::now();
        let expired_threads = {
            let mut tables = self.tables();
            tables.runs.retain(|_, run| match run.finished_for(now) {
                Some(age) if age >= self.retention.runs => false,
                Some(age) if age >= self.event_retention => {
                    run.forget_events();
                    true
                }
                _ => true,
            });
            match self.retention.thread_ttl {
                Some(ttl) => tables.expire_threads(&stamp_before(ttl)),
                None => Vec::new(),
            }
        };
        for thread_id in expired_threads {
            if let Err(e) = self.saver.delete_thread(&thread_id).await {
                tracing::warn!(thread_id = %thread_id, error = %e, "deleting an expired thread's checkpoints failed");
            }
        }
    }
}

impl Tables {
    /// Removes the threads last updated before `cutoff` (a timestamp) that no run holds or waits
    /// for, with their runs; returns their ids. Busy threads are checked under the same lock that
    /// starts runs, so a thread that just got a run stays.
    fn expire_threads(&mut self, cutoff: &str) -> Vec<String> {
        let expired: Vec<String> = self
            .threads
            .values()
            .filter(|t| {
                !t.is_busy() && t.updated_at.as_str() < cutoff && !self.temporary.contains(&t.thread_id)
            })
            .map(|t| t.thread_id.clone())
            .collect();
        if expired.is_empty() {
            return expired;
        }
        for id in &expired {
            self.threads.remove(id);
        }
        let gone: HashSet<&str> = expired.iter().map(String::as_str).collect();
        self.runs.retain(|_, run| !run.on_any(&gone));
        expired
    }
}
