//! [`Worker`]: takes runs off the [`MySqlRunQueue`] and runs them, renewing its lease while a run
//! goes on. Any number of workers, in any number of processes, share one queue and one saver.

use std::collections::HashMap;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{select, Either};
use futures_util::StreamExt;
use mnemograph_core::checkpoint::{Checkpointer, DynCheckpointer};
use mnemograph_core::store::{DynStore, InMemoryStore};
use mnemograph_core::{CompiledGraph, State, StreamMode, StreamModes};
use serde_json::{Map, Value};

use super::{Claim, Finished, Lease, MySqlRunQueue};
use mnemograph_server::__cluster::assistant_id;
use mnemograph_server::__cluster::RunCreate;
use mnemograph_server::__cluster::{RunInput, Served, ServedGraph};
use mnemograph_server::NoHooks;
use mnemograph_server::{Result, ServerError};

/// Runs queued runs of its graphs.
///
/// A run's payload is the body of a run request (`{"assistant_id": ..., "input": ...}`, as
/// `POST /threads/{id}/runs` takes it). A run taken over from a worker that stopped renewing
/// resumes the thread from its last checkpoint when the first attempt got as far as
/// checkpointing (its checkpoints carry the run's id), and starts from its input otherwise, so
/// the tasks that had finished are not run again.
pub struct Worker {
    queue: MySqlRunQueue,
    name: String,
    lease: Lease,
    saver: Arc<dyn DynCheckpointer>,
    store: Arc<dyn DynStore>,
    graphs: HashMap<String, Arc<dyn ServedGraph>>,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let graphs: Vec<&str> = self.graphs.keys().map(String::as_str).collect();
        f.debug_struct("Worker").field("name", &self.name).field("graphs", &graphs).finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker called `name` (unique among the workers of the queue) on `queue`, checkpointing
    /// threads in `saver`.
    pub fn new(queue: MySqlRunQueue, name: impl Into<String>, saver: impl Checkpointer) -> Self {
        Self {
            queue,
            name: name.into(),
            lease: Lease::default(),
            saver: Arc::new(saver),
            store: Arc::new(InMemoryStore::new()),
            graphs: HashMap::new(),
        }
    }

    /// Uses `lease` for its claims (30 s by default).
    #[must_use]
    pub fn with_lease(mut self, lease: Lease) -> Self {
        self.lease = lease;
        self
    }

    /// Uses `store` for the graphs' nodes (an in-memory store by default).
    #[must_use]
    pub fn with_shared_store(mut self, store: Arc<dyn DynStore>) -> Self {
        self.store = store;
        self
    }

    /// Runs the runs of `graph_id` with `graph`, on the worker's saver and store.
    #[must_use]
    pub fn graph<S: State, C: Send + Sync + 'static>(
        mut self,
        graph_id: &str,
        graph: CompiledGraph<S, C>,
    ) -> Self {
        let graph = graph.with_shared_checkpointer(self.saver.clone()).with_shared_store(self.store.clone());
        let served: Arc<dyn ServedGraph> =
            Arc::new(Served { graph: Arc::new(graph), hooks: Arc::new(NoHooks) });
        self.graphs.insert(assistant_id(graph_id), served.clone());
        self.graphs.insert(graph_id.to_owned(), served);
        self
    }

    /// Claims one run and runs it to its end; `None` when no run could start now.
    ///
    /// # Errors
    /// [`ServerError::Queue`] when the queue's database fails. A run's own failure is not an
    /// error here: the run is recorded as failed.
    pub async fn run_next(&self) -> Result<Option<Finished>> {
        let since = tokio::time::Instant::now();
        let Some(claim) = self.queue.claim(&self.name, self.lease).await? else { return Ok(None) };
        let how = match self.execute(&claim, since).await {
            Ok(Some(how)) => how,
            // The lease was lost: the run is another worker's now; record nothing.
            Ok(None) => return Ok(Some(Finished::Interrupted)),
            Err(e) => {
                tracing::warn!(run_id = %claim.run.run_id, error = %e, "a queued run failed");
                Finished::Error
            }
        };
        self.queue.finish(&claim, how).await?;
        Ok(Some(how))
    }

    /// Runs queued runs until the process ends, checking every `idle` when there is none.
    ///
    /// # Errors
    /// [`ServerError::Queue`] when the queue's database fails.
    pub async fn run(&self, idle: Duration) -> Result<()> {
        loop {
            if self.run_next().await?.is_none() {
                tokio::time::sleep(idle).await;
            }
        }
    }

    /// Runs the claimed run while renewing the lease, claimed no sooner than `since`; `None` when
    /// the lease was lost or could have run out.
    async fn execute(&self, claim: &Claim, since: tokio::time::Instant) -> Result<Option<Finished>> {
        let body: RunCreate = serde_json::from_value(claim.run.payload.clone())
            .map_err(|e| ServerError::BadRequest(format!("queued run payload: {e}")))?;
        let graph = self.graphs.get(&body.assistant_id).cloned().ok_or_else(|| {
            ServerError::NotFound(format!("no graph `{}` on this worker", body.assistant_id))
        })?;
        let (run_id, thread_id) = (&claim.run.run_id, &claim.run.thread_id);
        let mut metadata: Map<String, Value> = body.metadata.clone().unwrap_or_default();
        metadata.insert("run_id".into(), run_id.clone().into());
        let config = body.run_config(thread_id, &metadata, &graph.nodes(), None)?;
        let resumed = claim.attempt > 1
            && mnemograph_server::__cluster::exec::checkpointed(&*graph, thread_id, run_id).await?;
        let input = if resumed { RunInput::Continue } else { body.run_input(&graph.nodes())? };
        let context = mnemograph_server::__cluster::run_context(thread_id.clone(), run_id.clone(), &config);
        let mut stream = graph.run(context, input, config, StreamModes::NONE.with(StreamMode::Values));
        let mut renew = tokio::time::interval(self.lease.renew_every());
        renew.tick().await;
        // Another worker may take the run over one lease after the last renewal that succeeded:
        // by then this one has stopped it.
        let mut renewed = since;
        loop {
            match select(stream.next(), pin!(renew.tick())).await {
                Either::Left((Some(Ok(_)), _)) => {}
                Either::Left((Some(Err(e)), _)) => {
                    tracing::warn!(run_id = %run_id, error = %e, "a queued run failed");
                    return Ok(Some(Finished::Error));
                }
                Either::Left((None, _)) => return Ok(Some(Finished::Success)),
                Either::Right(_) => {
                    let sent = tokio::time::Instant::now();
                    let left = (renewed + self.lease.ttl).saturating_duration_since(sent);
                    match tokio::time::timeout(left, self.queue.renew(claim, self.lease)).await {
                        Ok(Ok(true)) => renewed = sent,
                        Ok(Ok(false)) => return Ok(None),
                        Ok(Err(e)) => tracing::warn!(run_id = %run_id, error = %e, "renewing a lease failed"),
                        Err(_) => {}
                    }
                    if tokio::time::Instant::now() >= renewed + self.lease.ttl {
                        tracing::warn!(run_id = %run_id, "no lease renewal succeeded for a whole lease: stopping the run");
                        return Ok(None);
                    }
                }
            }
        }
    }
}

/// How long a worker that found nothing to do waits before it looks again, by default.
pub const IDLE: Duration = Duration::from_millis(50);
