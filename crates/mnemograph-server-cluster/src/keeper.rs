//! [`ClusterRecords`]: the [`RecordKeeper`] of a cluster, its records in the shared database
//! ([`Ledger`]) and its runs run by whichever process claims them.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use mnemograph_core::checkpoint::DynCheckpointer;
use serde_json::{Map, Value};

use super::Ledger;
use mnemograph_server::__cluster::Retention;
use mnemograph_server::__cluster::RunRef;
use mnemograph_server::__cluster::Stop;
use mnemograph_server::__cluster::ThreadUpdate;
use mnemograph_server::__cluster::{NewRun, RecordKeeper};
use mnemograph_server::__cluster::{RunRecord, ThreadRecord, ThreadSearch};
use mnemograph_server::auth::Grant;
use mnemograph_server::Result;

/// A cluster's records, as this process reaches them.
pub(crate) struct ClusterRecords {
    ledger: Arc<Ledger>,
    /// The saver, whose checkpoints go with the threads deleted here.
    saver: Arc<dyn DynCheckpointer>,
    /// What the sweep deletes.
    retention: Retention,
}

impl ClusterRecords {
    /// The records of `ledger`, threads' checkpoints in `saver`, swept as `retention` says.
    pub(crate) fn new(ledger: Arc<Ledger>, saver: Arc<dyn DynCheckpointer>, retention: Retention) -> Self {
        Self { ledger, saver, retention }
    }
}

impl RecordKeeper for ClusterRecords {
    fn thread<'a>(&'a self, thread_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<ThreadRecord>> {
        Box::pin(self.ledger.thread(thread_id, grant))
    }

    fn search_threads<'a>(&'a self, q: &'a ThreadSearch) -> BoxFuture<'a, Result<Vec<ThreadRecord>>> {
        Box::pin(self.ledger.search_threads(q))
    }

    fn count_threads<'a>(&'a self, q: &'a ThreadSearch) -> BoxFuture<'a, Result<usize>> {
        Box::pin(self.ledger.count_threads(q))
    }

    fn create_thread<'a>(
        &'a self,
        record: ThreadRecord,
        do_nothing: bool,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<ThreadRecord>> {
        Box::pin(self.ledger.create_thread(record, do_nothing, grant))
    }

    fn insert_thread(&self, record: ThreadRecord) -> BoxFuture<'_, Result<ThreadRecord>> {
        Box::pin(self.ledger.insert_thread(record))
    }

    fn patch_thread<'a>(
        &'a self,
        thread_id: &'a str,
        metadata: Map<String, Value>,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<ThreadRecord>> {
        Box::pin(self.ledger.patch_thread(thread_id, metadata, grant))
    }

    fn delete_thread<'a>(&'a self, thread_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.ledger.delete_thread(thread_id, grant, &*self.saver))
    }

    fn runs_of<'a>(&'a self, thread_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<Vec<RunRecord>>> {
        Box::pin(self.ledger.runs_of(thread_id, grant))
    }

    fn run<'a>(
        &'a self,
        thread_id: &'a str,
        run_id: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<RunRef>> {
        Box::pin(async move { self.ledger.run(thread_id, run_id, grant).await.map(RunRef::new) })
    }

    fn open_runs<'a>(
        &'a self,
        statuses: &'a [&'a str],
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<Vec<RunRecord>>> {
        Box::pin(self.ledger.open_runs(statuses, grant))
    }

    fn delete_run<'a>(
        &'a self,
        thread_id: &'a str,
        run_id: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.ledger.delete_run(thread_id, run_id, grant))
    }

    fn create_run<'a>(&'a self, new: NewRun<'a>) -> BoxFuture<'a, Result<RunRef>> {
        // The input is read again from the request by the worker that claims the run.
        let NewRun {
            graph, assistant, thread_id, body, modes, options, strategy, limits, grant, user, ..
        } = new;
        Box::pin(async move {
            let ids = (graph.graph_id.as_str(), assistant);
            let asked = (body, modes, options);
            let run = self.ledger.create_run(ids, thread_id, asked, strategy, limits, grant, user);
            run.await.map(RunRef::new)
        })
    }

    fn cancel<'a>(
        &'a self,
        thread_id: &'a str,
        run_id: &'a str,
        how: Stop,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<RunRef>> {
        Box::pin(async move { self.ledger.cancel(thread_id, run_id, how, grant).await.map(RunRef::new) })
    }

    fn publish_state_update(&self, update: ThreadUpdate) -> BoxFuture<'_, bool> {
        Box::pin(async move { self.ledger.events.state_update(&update).await })
    }

    fn sweep(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Err(e) = self.ledger.sweep(&self.retention, &*self.saver).await {
                tracing::warn!(error = %e, "sweeping the cluster's expired runs and threads failed");
            }
        })
    }
}
