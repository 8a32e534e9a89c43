//! [`RecordKeeper`]: where the records of threads and runs are kept, and the rules that tie them
//! (one run at a time per thread, the multitask strategies, cleanup), behind one contract with
//! two keepers: [`LocalRecords`] in this process, and a cluster's in its shared database.
//! [`AssistantKeeper`] keeps assistants, and [`CronKeeper`] crons, the same two ways.

mod assistants;
pub(crate) mod conformance;
pub(crate) mod cron_conformance;
mod crons;
mod local;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

pub use assistants::AssistantKeeper;
pub use crons::{CronKeeper, CronsOf};
pub(crate) use local::{LocalAssistants, LocalCrons, LocalRecords};

use crate::assistant::AssistantRecord;
use crate::auth::{Grant, Identity};
use crate::error::Result;
use crate::events::ApiModes;
use crate::handle::RunRef;
use crate::limits::Limits;
use crate::records::{RunRecord, ThreadRecord, ThreadSearch};
use crate::registered::RegisteredGraph;
use crate::request::{Multitask, RunCreate};
use crate::run::Stop;
use crate::run_options::RunOptions;
use crate::served::RunInput;
use crate::thread_updates::ThreadUpdate;

/// A run asked for, checked against its assistant: what a keeper needs to create it.
pub struct NewRun<'a> {
    /// The graph it runs.
    pub graph: &'a RegisteredGraph,
    /// The assistant it runs the graph as.
    pub assistant: &'a AssistantRecord,
    /// Its thread; a new temporary one when `None`.
    pub thread_id: Option<&'a str>,
    /// The request.
    pub body: &'a RunCreate,
    /// The stream modes it asked for.
    pub modes: ApiModes,
    /// Its run-level options: when it may start, what becomes of a stateless run's thread.
    pub options: RunOptions,
    /// Its input, read against the graph.
    pub(crate) input: RunInput,
    /// What to do when its thread is busy.
    pub strategy: Multitask,
    /// The server's caps (the queue per thread).
    pub limits: &'a Limits,
    /// What the caller may reach; stamped on a thread made for the run and on its metadata.
    pub grant: &'a Grant,
    /// The caller, which the run's nodes see as `langgraph_auth_user`.
    pub user: Option<&'a Identity>,
}

impl std::fmt::Debug for NewRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewRun")
            .field("thread_id", &self.thread_id)
            .field("strategy", &self.strategy)
            .finish_non_exhaustive()
    }
}

/// Keeps the records of threads and runs. Every call is scoped by a [`Grant`]: a thread or run
/// it does not reach is not found, exactly as one that does not exist.
pub trait RecordKeeper: Send + Sync {
    /// A thread `grant` reaches.
    fn thread<'a>(&'a self, thread_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<ThreadRecord>>;

    /// The threads a search asks for (its grant's filter included), newest first.
    fn search_threads<'a>(&'a self, q: &'a ThreadSearch) -> BoxFuture<'a, Result<Vec<ThreadRecord>>>;

    /// How many threads a search finds.
    fn count_threads<'a>(&'a self, q: &'a ThreadSearch) -> BoxFuture<'a, Result<usize>>;

    /// Stores a new thread; an existing id is an error unless `do_nothing` and `grant` reaches
    /// the thread, which is then returned as it is.
    fn create_thread<'a>(
        &'a self,
        record: ThreadRecord,
        do_nothing: bool,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<ThreadRecord>>;

    /// Stores a thread under its id, as it is (a copy).
    fn insert_thread(&self, record: ThreadRecord) -> BoxFuture<'_, Result<ThreadRecord>>;

    /// Merges `metadata` into a thread's, then stamps `grant`'s over it.
    fn patch_thread<'a>(
        &'a self,
        thread_id: &'a str,
        metadata: Map<String, Value>,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<ThreadRecord>>;

    /// Stops a thread's runs and deletes it with its runs and checkpoints.
    fn delete_thread<'a>(&'a self, thread_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<()>>;

    /// The runs of a thread `grant` reaches, newest first.
    fn runs_of<'a>(&'a self, thread_id: &'a str, grant: &'a Grant) -> BoxFuture<'a, Result<Vec<RunRecord>>>;

    /// A run of a thread `grant` reaches.
    fn run<'a>(
        &'a self,
        thread_id: &'a str,
        run_id: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<RunRef>>;

    /// The runs not finished whose status is one of `statuses` (`pending`, `running`), on every
    /// thread `grant` reaches.
    fn open_runs<'a>(
        &'a self,
        statuses: &'a [&'a str],
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<Vec<RunRecord>>>;

    /// Deletes a finished run's record.
    fn delete_run<'a>(
        &'a self,
        thread_id: &'a str,
        run_id: &'a str,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<()>>;

    /// Creates a run and starts it, queues it or refuses it, by its thread's state and its
    /// `multitask_strategy`.
    fn create_run<'a>(&'a self, new: NewRun<'a>) -> BoxFuture<'a, Result<RunRef>>;

    /// Asks a run to stop; one still queued is settled at once.
    fn cancel<'a>(
        &'a self,
        thread_id: &'a str,
        run_id: &'a str,
        how: Stop,
        grant: &'a Grant,
    ) -> BoxFuture<'a, Result<RunRef>>;

    /// Tells every process of the keeper's that a thread's state was updated through the API;
    /// `false` when the keeper reaches no other process, and the update is this process's alone
    /// to tell.
    fn publish_state_update(&self, update: ThreadUpdate) -> BoxFuture<'_, bool> {
        let _ = update;
        Box::pin(async { false })
    }

    /// Frees what outlived its retention: finished runs, their events, and idle threads past
    /// the thread TTL with their checkpoints.
    fn sweep(&self) -> BoxFuture<'_, ()>;
}
