//! The workers of one process: a dispatcher claims runs from the queue while the process has
//! room, and each claimed run runs here — its events written to Redis, its lease renewed, its
//! end recorded on the run and its thread.

use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use futures_util::future::{select, Either};
use futures_util::StreamExt;
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::DynCheckpointer;
use serde::Deserialize;
use serde_json::{Map, Value};
use sqlx::Row;
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::time::Instant;

use super::events::Signal;
use super::fence::{self, Fenced};
use super::lease::Held;
use super::writer::write_events;
use super::{tables, Cluster, Ledger};
use crate::queue::mysql::finish_in;
use crate::queue::{Claim, Finished, Lease};
use mnemograph_server::__cluster::assistant_id;
use mnemograph_server::__cluster::exec::{self, Outcome};
use mnemograph_server::__cluster::App;
use mnemograph_server::__cluster::FinalRecord;
use mnemograph_server::__cluster::RunCreate;
use mnemograph_server::__cluster::ThreadUpdates;
use mnemograph_server::__cluster::{Plan, Stop};
use mnemograph_server::__cluster::{RunInput, ServedGraph};
use mnemograph_server::RunContext;
use mnemograph_server::{Result, ServerError};

/// How often an idle dispatcher looks at the queue without being woken: for runs whose lease ran
/// out, and for wake-ups lost while Redis was away.
const POLL: Duration = Duration::from_millis(250);

/// The most runs one claim takes.
const CLAIM_AT_ONCE: usize = 16;
/// The wait after a first failed read or write on the way to a run's end; doubled after each.
const RETRY_BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two tries.
const MAX_RETRY_BACKOFF: Duration = Duration::from_secs(5);
/// How many times ending a run's stream is tried.
const END_TRIES: u32 = 8;

/// What a queued run carries: the graph it runs, the request, the metadata of its checkpoints,
/// and who made it.
#[derive(Deserialize)]
struct Payload {
    /// The graph's id; a run queued without one names its graph by its request's assistant.
    #[serde(default)]
    graph_id: Option<String>,
    body: RunCreate,
    metadata: Map<String, Value>,
    /// The caller as `Identity::to_json` wrote it, on a server with authentication.
    #[serde(default)]
    auth_user: Option<Value>,
}

/// Starts this process's part of the cluster: the signal listener and, unless the cluster has
/// no workers here, the dispatcher.
pub(crate) fn start(cluster: &Cluster, ledger: Arc<Ledger>, app: Arc<App>) {
    tokio::spawn(listen(ledger.clone(), app.thread_updates.clone()));
    if cluster.workers > 0 {
        let worker = Arc::new(Worker {
            ledger,
            app,
            name: cluster.name.clone(),
            lease: cluster.lease,
            saver: cluster.saver.clone(),
        });
        tokio::spawn(worker.dispatch(cluster.workers));
    }
}

/// Forwards wake-ups to the dispatcher, stop requests to this process's runs and state updates
/// to its thread streams, reconnecting when the connection drops.
async fn listen(ledger: Arc<Ledger>, updates: ThreadUpdates) {
    loop {
        match ledger.events.signals().await {
            Ok(mut signals) => {
                // A wake-up may have been missed while no connection listened.
                ledger.wake.notify_one();
                while let Some(signal) = signals.next().await {
                    match signal {
                        Signal::Wake => ledger.wake.notify_one(),
                        Signal::Stop(run_id, how) => ledger.deliver_stop(&run_id, how),
                        Signal::StateUpdate(update) => updates.send(update),
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "listening for the cluster's signals failed; retrying"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

struct Worker {
    ledger: Arc<Ledger>,
    app: Arc<App>,
    name: String,
    lease: Lease,
    /// The cluster's MySQL saver, whose writes check the claim in their transaction.
    saver: Option<MySqlCheckpointer>,
}

impl Worker {
    /// Claims runs while fewer than `workers` run here, as many at once as there is room for.
    async fn dispatch(self: Arc<Self>, workers: usize) {
        let room = Arc::new(Semaphore::new(workers));
        loop {
            let Ok(first) = room.clone().acquire_owned().await else { return };
            let mut permits = vec![first];
            while permits.len() < CLAIM_AT_ONCE {
                match room.clone().try_acquire_owned() {
                    Ok(p) => permits.push(p),
                    Err(_) => break,
                }
            }
            // A lease starts when the claim commits; counting it from before the request keeps
            // this worker's view of it no longer than the database's.
            let since = Instant::now();
            match self.ledger.queue.claim_many(&self.name, self.lease, permits.len()).await {
                Ok(claims) if !claims.is_empty() => {
                    for (claim, permit) in claims.into_iter().zip(permits) {
                        let worker = self.clone();
                        tokio::spawn(async move {
                            worker.execute(&claim, since).await;
                            drop(permit);
                        });
                    }
                }
                Ok(_) => {
                    drop(permits);
                    let _ = tokio::time::timeout(POLL, self.ledger.wake.notified()).await;
                }
                Err(e) => {
                    drop(permits);
                    tracing::warn!(error = %e, "claiming a run failed");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }

    /// Runs a claimed run and records its end, then calls the hooks' `after_run`. Stops, records
    /// nothing and calls no hook once the run may be another worker's: its lease could have run
    /// out, or its saver refused a write.
    async fn execute(&self, claim: &Claim, since: Instant) {
        let (run_id, thread_id) = (claim.run.run_id.as_str(), claim.run.thread_id.as_str());
        let held = Held::start(self.ledger.clone(), claim.clone(), self.lease, since);
        let asked = match until_lost(&held, self.stop_requested(run_id)).await {
            Some(asked) => asked,
            None => return,
        };
        let started_at = mnemograph_server::__cluster::now();
        let webhook = super::webhook::of_claim(self.ledger.queue.pool(), claim).await;
        let (stop_tx, mut stop_rx) = watch::channel(asked);
        let running = (claim.attempt, stop_tx);
        self.ledger.running.lock().unwrap_or_else(PoisonError::into_inner).insert(run_id.to_owned(), running);
        let (tx, rx) = mpsc::unbounded_channel::<(String, Value)>();
        let mut writer = tokio::spawn(write_events(self.ledger.clone(), run_id.to_owned(), rx));
        let lost = held.lost.clone();
        // A worker that lost the run writes none of its events from then on: the run's stream
        // is the new owner's.
        let mut push = move |event: String, data: Value| {
            if !lost.load(Ordering::Acquire) && tx.send((event, data)).is_err() {
                tracing::error!("a run's event writer stopped before the run");
            }
        };
        // The run writes only while it is this worker's: a write after the run was taken over
        // is refused, and the refusal stops the run.
        let pool = self.ledger.queue.pool();
        let in_commit = self.saver.as_ref().map(|saver| fence::in_commit(saver, pool, claim));
        let saver = match &in_commit {
            Some(saver) => Arc::new(saver.clone()) as Arc<dyn DynCheckpointer>,
            None => self.app.saver.clone(),
        };
        let fenced = Fenced::new(
            saver,
            self.ledger.queue.pool().clone(),
            claim.clone(),
            self.lease.renew_every(),
            held.lost.clone(),
        );
        let fenced: Arc<dyn DynCheckpointer> =
            Arc::new(if in_commit.is_some() { fenced.checking_in_commit() } else { fenced });
        let graph = self.graph_of(claim).map(|(graph, payload)| (graph.on_saver(fenced.clone()), payload));
        let mut context = None;
        let outcome = match (asked, &graph) {
            (Some(how), _) => Outcome::Stopped(how),
            (None, Err(e)) => exec::fail(&mut push, &e.to_string(), "NotFound"),
            (None, Ok((graph, payload))) => match self.plan(&**graph, claim, payload).await {
                Err(e) => exec::fail(&mut push, &e.to_string(), "Unprocessable"),
                Ok((plan, ctx)) => {
                    context = Some(ctx.clone());
                    let stop = async {
                        let asked = async {
                            let how = stop_rx.wait_for(Option::is_some).await.ok().and_then(|s| *s);
                            how.unwrap_or(Stop::Interrupt)
                        };
                        match select(pin!(asked), pin!(held.given_up())).await {
                            Either::Left((how, _)) => how,
                            Either::Right(_) => Stop::Interrupt,
                        }
                    };
                    exec::run(&**graph, ctx, plan, claim.attempt, &mut push, stop).await
                }
            },
        };
        let graph = graph.ok().map(|(g, _)| g);
        let settled = if held.is_lost() {
            None
        } else {
            Some(exec::settle(graph.as_deref(), &*fenced, thread_id, run_id, &outcome).await)
        };
        if let Some(settled) = settled.as_ref().filter(|s| s.status == "error" && outcome.status() != "error")
        {
            // The run itself ended well, but what it left could not be read back.
            push("error".into(), settled.error.clone());
        }
        drop(push);
        // Every event is in Redis before the run's end is recorded: a reader that finds the run
        // ended has nothing more to wait for.
        let flushed = until_lost(&held, &mut writer).await;
        if flushed.is_none() {
            writer.abort();
        }
        {
            // A later attempt of the run in this process has a sender of its own, which stays.
            let mut running = self.ledger.running.lock().unwrap_or_else(PoisonError::into_inner);
            if running.get(run_id).is_some_and(|(attempt, _)| *attempt == claim.attempt) {
                running.remove(run_id);
            }
        }
        let (Some(settled), Some(flushed)) = (settled, flushed) else { return };
        if let Err(e) = flushed {
            tracing::error!(run_id, error = %e, "a run's event writer failed");
        }
        let Some(temporary) = self.record_end_retried(&held, claim, &outcome, &settled).await else { return };
        // The run's end is this worker's alone from here: the hook runs once, the webhook is
        // sent once.
        if let Some((target, record)) = webhook {
            self.app.webhooks.deliver(&target, FinalRecord::new(record, &outcome, &settled, started_at));
        }
        if let (Some(graph), Some(context)) = (&graph, &context) {
            let ended =
                if settled.status == "error" { Outcome::Failed(settled.error.clone()) } else { outcome };
            graph.after_run(context, &exec::run_end(&ended)).await;
        }
        drop(held);
        if temporary {
            if let Err(e) = self.app.saver.delete_thread(thread_id).await {
                tracing::warn!(thread_id, error = %e, "deleting a stateless run's thread failed");
            }
        }
        self.end_stream(run_id, settled.status, &settled.output).await;
        self.ledger.events.wake().await;
    }

    /// How the run was asked to stop before it started, read again after a failure.
    async fn stop_requested(&self, run_id: &str) -> Option<Stop> {
        let mut backoff = RETRY_BACKOFF;
        loop {
            match tables::stop_requested(self.ledger.queue.pool(), run_id).await {
                Ok(asked) => return asked,
                Err(e) => {
                    tracing::warn!(run_id, error = %e, "reading a run's stop request failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_RETRY_BACKOFF);
                }
            }
        }
    }

    /// Records the run's end, again after a failure, while the run is this worker's. `None` when
    /// it is not (any more).
    async fn record_end_retried(
        &self,
        held: &Held,
        claim: &Claim,
        outcome: &Outcome,
        settled: &exec::Settled,
    ) -> Option<bool> {
        let mut backoff = RETRY_BACKOFF;
        while !held.is_lost() {
            match self.record_end(claim, outcome, settled).await {
                Ok(recorded) => return recorded,
                Err(e) => {
                    tracing::warn!(run_id = %claim.run.run_id, error = %e, "recording a run's end failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_RETRY_BACKOFF);
                }
            }
        }
        tracing::warn!(run_id = %claim.run.run_id, "the run's lease was lost before its end was recorded");
        None
    }

    /// Ends the run's stream, again after a failure; readers of a stream left without its end
    /// entry end it from the run's record.
    async fn end_stream(&self, run_id: &str, status: &str, output: &Value) {
        let mut backoff = RETRY_BACKOFF;
        for attempt in 1..=END_TRIES {
            match self.ledger.events.end(run_id, status, output).await {
                Ok(()) => return,
                Err(e) if attempt < END_TRIES => {
                    tracing::warn!(run_id, error = %e, "ending a run's stream failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_RETRY_BACKOFF);
                }
                Err(e) => {
                    tracing::error!(run_id, error = %e, "ending a run's stream failed; its readers end it from the run's record");
                }
            }
        }
    }

    /// The graph a claimed run runs, and its payload.
    fn graph_of(&self, claim: &Claim) -> Result<(Arc<dyn ServedGraph>, Payload)> {
        let payload: Payload = serde_json::from_value(claim.run.payload.clone())
            .map_err(|e| ServerError::BadRequest(format!("queued run payload: {e}")))?;
        let graph_id = match &payload.graph_id {
            Some(id) => id.clone(),
            None => payload.body.assistant_id.clone(),
        };
        let graph =
            self.app.graphs.iter().find(|g| g.graph_id == graph_id || assistant_id(&g.graph_id) == graph_id);
        let graph = graph.ok_or_else(|| ServerError::NotFound(format!("Graph '{graph_id}' not found")))?;
        Ok((graph.graph.clone(), payload))
    }

    /// The run's input and configuration. A run taken over resumes from the thread's last
    /// checkpoint when its first attempt got as far as checkpointing.
    async fn plan(
        &self,
        graph: &dyn ServedGraph,
        claim: &Claim,
        payload: &Payload,
    ) -> Result<(Plan, RunContext)> {
        let (run_id, thread_id) = (&claim.run.run_id, &claim.run.thread_id);
        let nodes = graph.nodes();
        let body = &payload.body;
        let user = payload.auth_user.as_ref().and_then(mnemograph_server::__cluster::identity_from_json);
        let config = body.run_config(thread_id, &payload.metadata, &nodes, user.as_ref())?;
        let resumed = claim.attempt > 1 && exec::checkpointed(graph, thread_id, run_id).await?;
        let input = if resumed { RunInput::Continue } else { body.run_input(&nodes)? };
        let context = mnemograph_server::__cluster::run_context(thread_id.clone(), run_id.clone(), &config);
        Ok((Plan { input, config, modes: body.modes()?, graph: None }, context))
    }

    /// Records the run's end on the run and its thread, in one transaction. `None` when the run
    /// is another worker's now; otherwise whether the run's thread was a stateless run's, now
    /// deleted.
    async fn record_end(
        &self,
        claim: &Claim,
        outcome: &Outcome,
        settled: &exec::Settled,
    ) -> Result<Option<bool>> {
        let how = match (settled.status, outcome) {
            ("error", _) | (_, Outcome::Failed(_)) => Finished::Error,
            (_, Outcome::Done) => Finished::Success,
            (_, Outcome::Stopped(_)) => Finished::Interrupted,
        };
        let (run_id, thread_id) = (&claim.run.run_id, &claim.run.thread_id);
        in_tx!(self.ledger.queue.pool(), |tx| {
            if !finish_in(tx, claim, how).await? {
                // Deleted with its thread (its end is still announced), taken over, or ended by
                // an earlier try of this very transaction whose commit answer was lost (the
                // server went away after committing): its end is recorded, and it is ours.
                let row = sqlx::query("SELECT status, attempt, worker FROM server_runs WHERE run_id = ?")
                    .bind(run_id)
                    .fetch_optional(&mut **tx)
                    .await?;
                let Some(row) = row else { return Ok(Ok(Some(false))) };
                let ours = row.try_get::<String, _>("status")? == how.status()
                    && row.try_get::<u32, _>("attempt")? == claim.attempt
                    && row.try_get::<Option<String>, _>("worker")?.is_none();
                return Ok(Ok(if ours { Some(false) } else { None }));
            }
            if let Outcome::Stopped(Stop::Rollback) = outcome {
                sqlx::query("DELETE FROM server_runs WHERE run_id = ?")
                    .bind(run_id)
                    .execute(&mut **tx)
                    .await?;
            } else {
                sqlx::query("UPDATE server_runs SET output = ? WHERE run_id = ?")
                    .bind(settled.output.to_string())
                    .bind(run_id)
                    .execute(&mut **tx)
                    .await?;
            }
            let open = sqlx::query(
                "SELECT COUNT(*) AS n FROM server_runs WHERE thread_id = ? AND status IN ('pending', 'running')",
            )
            .bind(thread_id)
            .fetch_one(&mut **tx)
            .await?
            .try_get::<i64, _>("n")?;
            let temporary =
                sqlx::query("SELECT temporary FROM server_threads WHERE thread_id = ? FOR UPDATE")
                    .bind(thread_id)
                    .fetch_optional(&mut **tx)
                    .await?
                    .map(|r| r.try_get::<i8, _>("temporary"))
                    .transpose()?
                    .is_some_and(|t| t != 0);
            if temporary && open == 0 {
                sqlx::query("DELETE FROM server_threads WHERE thread_id = ?")
                    .bind(thread_id)
                    .execute(&mut **tx)
                    .await?;
                sqlx::query("DELETE FROM server_runs WHERE thread_id = ?")
                    .bind(thread_id)
                    .execute(&mut **tx)
                    .await?;
                return Ok(Ok(Some(true)));
            }
            // A thread whose state could not be read back keeps the values it had.
            sqlx::query(
                "UPDATE server_threads SET state_values = IF(?, ?, state_values), \
                 interrupts = IF(?, ?, interrupts), error = ?, status = ?, updated_at = ? WHERE thread_id = ?",
            )
            .bind(settled.state_known)
            .bind(settled.values.to_string())
            .bind(settled.state_known)
            .bind(Value::Object(settled.interrupts.clone()).to_string())
            .bind(settled.error.to_string())
            .bind(if open > 0 { "busy" } else { settled.thread_status })
            .bind(mnemograph_server::__cluster::now())
            .bind(thread_id)
            .execute(&mut **tx)
            .await?;
            Ok(Ok(Some(false)))
        })
    }
}

/// `work`'s result, or `None` when the run is given up first.
async fn until_lost<T>(held: &Held, work: impl std::future::Future<Output = T>) -> Option<T> {
    match select(pin!(work), pin!(held.given_up())).await {
        Either::Left((done, _)) => Some(done),
        Either::Right(_) => None,
    }
}
