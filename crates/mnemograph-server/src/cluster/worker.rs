//! The workers of one process: a dispatcher claims runs from the queue while the process has
//! room, and each claimed run runs here — its events written to Redis, its lease renewed, its
//! end recorded on the run and its thread.

use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use futures_util::future::{select, Either};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value};
use sqlx::Row;
use tokio::sync::{mpsc, watch, Semaphore};

use super::events::Signal;
use super::{tables, Cluster, Ledger};
use crate::app::App;
use crate::error::{Result, ServerError};
use crate::exec::{self, Outcome};
use crate::hooks::RunContext;
use crate::queue::mysql::finish_in;
use crate::queue::{Claim, Finished, Lease};
use crate::request::RunCreate;
use crate::run::{Plan, Stop};
use crate::served::{RunInput, ServedGraph};

/// How often an idle dispatcher looks at the queue without being woken: for runs whose lease ran
/// out, and for wake-ups lost while Redis was away.
const POLL: Duration = Duration::from_millis(250);

/// The most runs one claim takes.
const CLAIM_AT_ONCE: usize = 16;

/// What a queued run carries: the request, and the metadata of its checkpoints.
#[derive(Deserialize)]
struct Payload {
    body: RunCreate,
    metadata: Map<String, Value>,
}

/// Starts this process's part of the cluster: the signal listener and, unless the cluster has
/// no workers here, the dispatcher.
pub(crate) fn start(cluster: &Cluster, ledger: Arc<Ledger>, app: Arc<App>) {
    tokio::spawn(listen(ledger.clone()));
    if cluster.workers > 0 {
        let worker = Arc::new(Worker { ledger, app, name: cluster.name.clone(), lease: cluster.lease });
        tokio::spawn(worker.dispatch(cluster.workers));
    }
}

/// Forwards wake-ups to the dispatcher and stop requests to this process's runs, reconnecting
/// when the connection drops.
async fn listen(ledger: Arc<Ledger>) {
    loop {
        match ledger.events.signals().await {
            Ok(mut signals) => {
                // A wake-up may have been missed while no connection listened.
                ledger.wake.notify_one();
                while let Some(signal) = signals.next().await {
                    match signal {
                        Signal::Wake => ledger.wake.notify_one(),
                        Signal::Stop(run_id, how) => ledger.deliver_stop(&run_id, how),
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
            match self.ledger.queue.claim_many(&self.name, self.lease, permits.len()).await {
                Ok(claims) if !claims.is_empty() => {
                    for (claim, permit) in claims.into_iter().zip(permits) {
                        let worker = self.clone();
                        tokio::spawn(async move {
                            if let Err(e) = worker.execute(&claim).await {
                                tracing::warn!(run_id = %claim.run.run_id, error = %e, "recording a run's end failed");
                            }
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

    /// Runs a claimed run and records its end; returns early, recording nothing, when the lease
    /// was lost to another worker.
    async fn execute(&self, claim: &Claim) -> Result<()> {
        let (run_id, thread_id) = (claim.run.run_id.as_str(), claim.run.thread_id.as_str());
        let (stop_tx, mut stop_rx) =
            watch::channel(tables::stop_requested(self.ledger.queue.pool(), run_id).await?);
        self.ledger.running.lock().unwrap_or_else(PoisonError::into_inner).insert(run_id.to_owned(), stop_tx);
        let lost = AtomicBool::new(false);
        let (tx, rx) = mpsc::unbounded_channel::<(String, Value)>();
        let writer = tokio::spawn(write_events(self.ledger.clone(), run_id.to_owned(), rx));
        let graph = self.graph_of(claim);
        let mut push = move |event: String, data: Value| {
            let _ = tx.send((event, data));
        };
        let asked = *stop_rx.borrow();
        let outcome = match (asked, &graph) {
            (Some(how), _) => Outcome::Stopped(how),
            (None, Err(e)) => exec::fail(&mut push, &e.to_string(), "NotFound"),
            (None, Ok((graph, payload))) => match self.plan(&**graph, claim, payload).await {
                Err(e) => exec::fail(&mut push, &e.to_string(), "Unprocessable"),
                Ok((plan, context)) => {
                    let stop = self.stop_or_lost(claim, &mut stop_rx, &lost);
                    exec::drive(&**graph, context, plan, claim.attempt, &mut push, stop).await
                }
            },
        };
        drop(push);
        // Every event is in Redis before the run's end is recorded: a reader that finds the run
        // ended has nothing more to wait for.
        let _ = writer.await;
        self.ledger.running.lock().unwrap_or_else(PoisonError::into_inner).remove(run_id);
        if lost.load(Ordering::Relaxed) {
            return Ok(());
        }
        let graph = graph.ok().map(|(g, _)| g);
        let settled = exec::settle(graph.as_deref(), &*self.app.saver, thread_id, run_id, &outcome).await;
        let Some(temporary) = self.record_end(claim, &outcome, &settled).await? else { return Ok(()) };
        if temporary {
            if let Err(e) = self.app.saver.delete_thread(thread_id).await {
                tracing::warn!(thread_id, error = %e, "deleting a stateless run's thread failed");
            }
        }
        self.ledger.events.end(run_id, outcome.status(), &settled.output).await?;
        self.ledger.events.wake().await;
        Ok(())
    }

    /// The graph a claimed run runs, and its payload.
    fn graph_of(&self, claim: &Claim) -> Result<(Arc<dyn ServedGraph>, Payload)> {
        let payload: Payload = serde_json::from_value(claim.run.payload.clone())
            .map_err(|e| ServerError::BadRequest(format!("queued run payload: {e}")))?;
        let assistant = self.app.assistant(&payload.body.assistant_id)?;
        Ok((assistant.graph.clone(), payload))
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
        let config = body.run_config(thread_id, &payload.metadata, &nodes)?;
        let resumed = claim.attempt > 1 && exec::checkpointed(graph, thread_id, run_id).await?;
        let input = if resumed { RunInput::Continue } else { body.run_input(&nodes)? };
        let context = RunContext {
            thread_id: thread_id.clone(),
            run_id: run_id.clone(),
            metadata: payload.metadata.clone(),
        };
        Ok((Plan { input, config, modes: body.modes()? }, context))
    }

    /// Resolves when the run is asked to stop, or when its lease is lost (setting `lost`);
    /// renews the lease meanwhile.
    async fn stop_or_lost(
        &self,
        claim: &Claim,
        stop: &mut watch::Receiver<Option<Stop>>,
        lost: &AtomicBool,
    ) -> Stop {
        let mut renew = tokio::time::interval(self.lease.renew_every());
        renew.tick().await;
        loop {
            let asked = match select(pin!(stop.wait_for(Option::is_some)), pin!(renew.tick())).await {
                Either::Left((Ok(how), _)) => Some(how.unwrap_or(Stop::Interrupt)),
                Either::Left((Err(_), _)) => Some(Stop::Interrupt),
                Either::Right(_) => None,
            };
            if let Some(how) = asked {
                return how;
            }
            match self.ledger.queue.renew(claim, self.lease).await {
                Ok(true) => {
                    // A stop request whose message was lost is in the run's record.
                    if let Ok(Some(how)) =
                        tables::stop_requested(self.ledger.queue.pool(), &claim.run.run_id).await
                    {
                        return how;
                    }
                }
                Ok(false) => {
                    lost.store(true, Ordering::Relaxed);
                    return Stop::Interrupt;
                }
                Err(e) => tracing::warn!(run_id = %claim.run.run_id, error = %e, "renewing a lease failed"),
            }
        }
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
        let how = match outcome {
            Outcome::Done => Finished::Success,
            Outcome::Failed(_) => Finished::Error,
            Outcome::Stopped(_) => Finished::Interrupted,
        };
        let (run_id, thread_id) = (&claim.run.run_id, &claim.run.thread_id);
        in_tx!(self.ledger.queue.pool(), |tx| {
            if !finish_in(tx, claim, how).await? {
                // Deleted with its thread (its end is still announced), or taken over.
                let exists = sqlx::query("SELECT 1 FROM server_runs WHERE run_id = ?")
                    .bind(run_id)
                    .fetch_optional(&mut **tx)
                    .await?
                    .is_some();
                return Ok(Ok(if exists { None } else { Some(false) }));
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
            sqlx::query(
                "UPDATE server_threads SET state_values = ?, interrupts = ?, error = ?, status = ?, updated_at = ? \
                 WHERE thread_id = ?",
            )
            .bind(settled.values.to_string())
            .bind(Value::Object(settled.interrupts.clone()).to_string())
            .bind(settled.error.to_string())
            .bind(if open > 0 { "busy" } else { settled.thread_status })
            .bind(crate::records::now())
            .bind(thread_id)
            .execute(&mut **tx)
            .await?;
            Ok(Ok(Some(false)))
        })
    }
}

/// Writes a run's events to Redis as they come, as many at a time as are waiting.
async fn write_events(ledger: Arc<Ledger>, run_id: String, mut rx: mpsc::UnboundedReceiver<(String, Value)>) {
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while let Ok(more) = rx.try_recv() {
            batch.push(more);
        }
        if let Err(e) = ledger.events.append(&run_id, &batch).await {
            tracing::warn!(run_id = %run_id, error = %e, "writing a run's events failed");
        }
    }
}
