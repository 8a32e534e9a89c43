//! [`App`]: what every request shares: the registered graphs, the saver and the store, the
//! server's limits, the [`RecordKeeper`] of its threads and runs, the [`AssistantKeeper`] of
//! its assistants and the [`CronKeeper`] of its crons.

use std::sync::Arc;

use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::store::DynStore;
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::assistant::{assistant_id, AssistantRecord};
use crate::auth::{Action, Caller, Grant, Resource};
use crate::error::{assistant_not_found, Result, ServerError};
use crate::handle::RunRef;
use crate::keeper::{AssistantKeeper, CronKeeper, CronsOf, LocalCrons, NewRun, RecordKeeper};
use crate::limits::Limits;
use crate::records::{new_thread_id, RunRecord, ThreadRecord, ThreadSearch};
use crate::registered::RegisteredGraph;
use crate::request::{Multitask, RunCreate};
use crate::retention::Retention;
use crate::run::Stop;
use crate::store_quota::StoreWrites;
use crate::streams::Streams;
use crate::thread_updates::{ThreadUpdate, ThreadUpdates};
use crate::webhook::Webhooks;

/// The server's state, shared by every request.
pub struct App {
    /// The graphs served, by graph id.
    pub graphs: Vec<RegisteredGraph>,
    /// The assistants of those graphs.
    pub(crate) assistants: Arc<dyn AssistantKeeper>,
    /// The crons that make runs on a schedule.
    pub(crate) crons: Arc<dyn CronKeeper>,
    /// The saver every graph checkpoints in.
    pub saver: Arc<dyn DynCheckpointer>,
    pub(crate) store: Arc<dyn DynStore>,
    /// What one request may ask: pages, recursion, waiting runs.
    pub(crate) limits: Limits,
    /// How long finished runs and idle threads stay, and how many events a run keeps.
    pub(crate) retention: Retention,
    /// The event streams each caller has open.
    pub(crate) streams: Streams,
    /// Each caller's store puts that the quota checks, one at a time.
    pub(crate) store_writes: StoreWrites,
    /// Where runs' final records may be posted, and the client that posts them.
    pub webhooks: Webhooks,
    /// The state updates the thread streams of this process carry.
    pub thread_updates: ThreadUpdates,
    /// Where the records of threads and runs are kept: in this process or in a cluster's
    /// database.
    records: Arc<dyn RecordKeeper>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App").finish_non_exhaustive()
    }
}

impl App {
    pub(crate) fn new(
        graphs: Vec<RegisteredGraph>,
        assistants: Arc<dyn AssistantKeeper>,
        saver: Arc<dyn DynCheckpointer>,
        store: Arc<dyn DynStore>,
        records: Arc<dyn RecordKeeper>,
    ) -> Self {
        Self {
            graphs,
            assistants,
            crons: Arc::new(LocalCrons::default()),
            saver,
            store,
            limits: Limits::default(),
            retention: Retention::default(),
            streams: Streams::new(Limits::DEFAULT_MAX_STREAMS_PER_USER),
            store_writes: StoreWrites::default(),
            webhooks: Webhooks::default(),
            thread_updates: ThreadUpdates::default(),
            records,
        }
    }

    /// Keeps finished runs, idle threads and run events as `retention` says.
    pub(crate) fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// The graph registered as `graph_id`; 404 otherwise, as LangGraph answers an assistant
    /// asked for a graph it does not serve.
    pub(crate) fn graph(&self, graph_id: &str) -> Result<&RegisteredGraph> {
        self.graphs.iter().find(|g| g.graph_id == graph_id).ok_or_else(|| {
            let known: Vec<&str> = self.graphs.iter().map(|g| g.graph_id.as_str()).collect();
            ServerError::NotFound(format!("Graph '{graph_id}' not found. Expected one of: {known:?}"))
        })
    }

    /// The assistant id a request names: an assistant's UUID, or a registered graph's id, which
    /// names the graph's system assistant (as LangGraph reads it); anything else is unprocessable.
    pub(crate) fn assistant_id(&self, id: &str) -> Result<String> {
        if self.graphs.iter().any(|g| g.graph_id == id) {
            return Ok(assistant_id(id));
        }
        if Uuid::parse_str(id).is_ok() {
            return Ok(id.to_owned());
        }
        let graphs: Vec<&str> = self.graphs.iter().map(|g| g.graph_id.as_str()).collect();
        Err(ServerError::Unprocessable(format!(
            "Invalid assistant: '{id}'. Must be either:\n- A valid assistant UUID, or\n- One of the registered graphs: {}",
            graphs.join(", ")
        )))
    }

    /// The assistant a run names and its graph, if `caller` may run it. A system assistant runs
    /// for every caller; another only for a caller whose assistant read grant reaches it, as
    /// LangGraph checks it, and is not found otherwise.
    pub(crate) async fn run_assistant(
        &self,
        id: &str,
        caller: &Caller,
    ) -> Result<(AssistantRecord, &RegisteredGraph)> {
        let id = self.assistant_id(id)?;
        let assistant = self.assistants.get(&id, &Grant::all()).await?;
        if !assistant.is_system() {
            let grant = caller
                .grant(Resource::Assistants, Action::Read, || serde_json::json!({ "assistant_id": id }))
                .await?;
            if !grant.admits(&assistant.metadata) {
                return Err(assistant_not_found(&id));
            }
        }
        let graph = self.graph(&assistant.graph_id).map_err(|_| assistant_not_found(&id))?;
        Ok((assistant, graph))
    }

    /// The graph a thread ran, if it ran one.
    pub(crate) fn thread_graph(&self, thread: &ThreadRecord) -> Option<&RegisteredGraph> {
        let graph_id = thread.metadata.get("graph_id")?.as_str()?;
        self.graphs.iter().find(|g| g.graph_id == graph_id)
    }

    /// A thread `grant` reaches; one it does not is not found, as one that does not exist.
    pub(crate) async fn thread(&self, thread_id: &str, grant: &Grant) -> Result<ThreadRecord> {
        self.records.thread(thread_id, grant).await
    }

    /// The threads a search asks for, newest first.
    pub(crate) async fn search_threads(&self, q: &ThreadSearch) -> Result<Vec<ThreadRecord>> {
        self.records.search_threads(q).await
    }

    /// How many threads a search finds.
    pub(crate) async fn count_threads(&self, q: &ThreadSearch) -> Result<usize> {
        self.records.count_threads(q).await
    }

    /// Creates a thread, its metadata stamped with `grant`'s; an existing id is an error unless
    /// `if_exists` is `do_nothing` and `grant` reaches the thread.
    pub(crate) async fn create_thread(
        &self,
        thread_id: Option<String>,
        mut metadata: Map<String, Value>,
        if_exists: Option<&str>,
        grant: &Grant,
    ) -> Result<ThreadRecord> {
        let thread_id = new_thread_id(thread_id)?;
        let if_exists = if_exists.unwrap_or("raise");
        if !matches!(if_exists, "raise" | "do_nothing") {
            return Err(ServerError::Unprocessable(format!("unknown if_exists `{if_exists}`")));
        }
        grant.stamp(&mut metadata);
        let record = ThreadRecord::new(thread_id, metadata);
        self.records.create_thread(record, if_exists == "do_nothing", grant).await
    }

    /// Merges `metadata` into a thread's, then stamps `grant`'s over it.
    pub(crate) async fn patch_thread(
        &self,
        thread_id: &str,
        metadata: Map<String, Value>,
        grant: &Grant,
    ) -> Result<ThreadRecord> {
        self.records.patch_thread(thread_id, metadata, grant).await
    }

    /// Stops a thread's runs and deletes it with its checkpoints, runs and crons.
    pub(crate) async fn delete_thread(&self, thread_id: &str, grant: &Grant) -> Result<()> {
        self.records.delete_thread(thread_id, grant).await?;
        self.crons.forget(CronsOf::Thread(thread_id)).await
    }

    /// Copies a thread `read` reaches and its checkpoints under a new id, stamped with
    /// `create`'s metadata.
    pub(crate) async fn copy_thread(
        &self,
        thread_id: &str,
        read: &Grant,
        create: &Grant,
    ) -> Result<ThreadRecord> {
        let source = self.thread(thread_id, read).await?;
        let new_id = Uuid::now_v7().to_string();
        self.saver.copy_thread(thread_id, &new_id).await.map_err(mnemograph_core::Error::from)?;
        let mut metadata = source.metadata.clone();
        create.stamp(&mut metadata);
        let mut copy = ThreadRecord::new(new_id, metadata);
        copy.values = source.values.clone();
        copy.interrupts = source.interrupts.clone();
        copy.status = if source.status == "busy" { "idle" } else { source.status };
        self.records.insert_thread(copy).await
    }

    /// The runs of a thread `grant` reaches, newest first.
    pub(crate) async fn runs_of(&self, thread_id: &str, grant: &Grant) -> Result<Vec<RunRecord>> {
        self.records.runs_of(thread_id, grant).await
    }

    /// The runs not finished whose status is one of `statuses`, on every thread `grant` reaches.
    pub(crate) async fn open_runs(&self, statuses: &[&str], grant: &Grant) -> Result<Vec<RunRecord>> {
        self.records.open_runs(statuses, grant).await
    }

    /// A run of a thread `grant` reaches.
    pub(crate) async fn run(&self, thread_id: &str, run_id: &str, grant: &Grant) -> Result<RunRef> {
        self.records.run(thread_id, run_id, grant).await
    }

    /// Tells the thread streams that a thread's state was updated, in every process of a cluster.
    pub(crate) async fn state_updated(&self, update: ThreadUpdate) {
        if !self.records.publish_state_update(update.clone()).await {
            self.thread_updates.send(update);
        }
    }

    /// Frees what outlived its retention (see [`RecordKeeper::sweep`]).
    pub(crate) async fn sweep(&self) {
        self.records.sweep().await;
    }

    /// Deletes a finished run's record.
    pub(crate) async fn delete_run(&self, thread_id: &str, run_id: &str, grant: &Grant) -> Result<()> {
        self.records.delete_run(thread_id, run_id, grant).await
    }

    /// Creates a run on `thread_id` (a new temporary thread when `None`) and starts it, queues it
    /// or refuses it, by the thread's state and the request's `multitask_strategy`. The thread
    /// must be one `grant` reaches, and the assistant one `caller` may run; a thread made for the
    /// run, and the run's metadata, are stamped with `grant`. The run's nodes see the caller as
    /// `langgraph_auth_user`.
    pub(crate) async fn create_run(
        &self,
        thread_id: Option<&str>,
        body: &RunCreate,
        grant: &Grant,
        caller: &Caller,
    ) -> Result<RunRef> {
        let (assistant, graph) = self.run_assistant(&body.assistant_id, caller).await?;
        let body = &body.under(&assistant)?;
        let modes = body.modes()?;
        let options = body.options(&*graph.graph)?;
        let input = body.run_input(&graph.graph.nodes())?;
        let strategy = Multitask::parse(body.multitask_strategy.as_deref())?;
        self.limits.check_recursion_limit(body.config.as_ref().and_then(|c| c.recursion_limit))?;
        self.webhooks.check(body.webhook.as_deref())?;
        let limits = &self.limits;
        let user = caller.user();
        let new = NewRun {
            graph,
            assistant: &assistant,
            thread_id,
            body,
            modes,
            options,
            input,
            strategy,
            limits,
            grant,
            user,
        };
        self.records.create_run(new).await
    }

    /// Asks a run to stop.
    pub(crate) async fn cancel(
        &self,
        thread_id: &str,
        run_id: &str,
        how: Stop,
        grant: &Grant,
    ) -> Result<RunRef> {
        self.records.cancel(thread_id, run_id, how, grant).await
    }
}
