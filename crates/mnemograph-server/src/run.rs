//! A run in progress: its record, its events (sent live to every client streaming it, and kept
//! in an [`EventLog`] so a client that joins late or reconnects reads them from any point), and
//! its cancellation.

use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt;

use serde_json::Value;
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;

use crate::event_log::{Entry, EventLog};
use crate::events::ApiModes;
use crate::records::RunRecord;
use crate::served::RunInput;
use crate::sse::{Frame, Frames};

/// How many events a live reader may fall behind before it reads on from the kept log, which
/// holds only the latest state of each message, instead of every event in between.
const LIVE_BACKLOG: usize = 256;

/// What a run needs to start; taken when it starts.
pub(crate) struct Plan {
    pub(crate) input: RunInput,
    pub(crate) config: mnemograph_core::RunConfig,
    pub(crate) modes: ApiModes,
}

/// How a run is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Stopped; its checkpoints stay (`action = "interrupt"`).
    Interrupt,
    /// Stopped; its checkpoints and record are deleted (`action = "rollback"`).
    Rollback,
}

/// The kept events and the live feed, under one lock so that a reader that takes the kept
/// events and subscribes to the feed at once misses nothing in between.
struct Events {
    log: EventLog,
    /// Every event as it happens; `None` once the run has finished, which ends the live readers.
    live: Option<broadcast::Sender<Arc<Entry>>>,
}

/// A run and what clients can wait on.
pub(crate) struct RunHandle {
    pub(crate) record: Mutex<RunRecord>,
    pub(crate) plan: Mutex<Option<Plan>>,
    events: Mutex<Events>,
    /// What `wait` and `join` answer: the final values, or `{"__error__": ...}`.
    output: Mutex<Value>,
    /// When the run finished, once it has: what its retention counts from.
    done: watch::Sender<Option<Instant>>,
    stop: watch::Sender<Option<Stop>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RunHandle {
    /// A run not started yet, keeping up to `log_bytes` of droppable events (see [`EventLog`]).
    pub(crate) fn new(record: RunRecord, plan: Plan, log_bytes: usize) -> Self {
        Self {
            record: Mutex::new(record),
            plan: Mutex::new(Some(plan)),
            events: Mutex::new(Events {
                log: EventLog::new(log_bytes),
                live: Some(broadcast::channel(LIVE_BACKLOG).0),
            }),
            output: Mutex::new(Value::Null),
            done: watch::channel(None).0,
            stop: watch::channel(None).0,
        }
    }

    pub(crate) fn run_id(&self) -> String {
        lock(&self.record).run_id.clone()
    }

    /// Whether the run is one of `thread_id`'s, without copying its record.
    pub(crate) fn is_on(&self, thread_id: &str) -> bool {
        lock(&self.record).thread_id == thread_id
    }

    /// Whether the run is one of these threads'.
    pub(crate) fn on_any(&self, threads: &std::collections::HashSet<&str>) -> bool {
        threads.contains(lock(&self.record).thread_id.as_str())
    }

    pub(crate) fn record(&self) -> RunRecord {
        lock(&self.record).clone()
    }

    pub(crate) fn set_status(&self, status: &'static str) {
        let mut r = lock(&self.record);
        r.status = status;
        r.updated_at = crate::records::now();
    }

    pub(crate) fn take_plan(&self) -> Option<Plan> {
        lock(&self.plan).take()
    }

    /// Numbers and keeps an event, and sends it to the live readers.
    pub(crate) fn push(&self, event: String, data: &Value) {
        let mut events = lock(&self.events);
        let entry = events.log.push(event, data);
        if let Some(live) = &events.live {
            // An error only says that nobody is streaming the run right now.
            let _ = live.send(entry);
        }
    }

    /// Sets what `wait` and `join` answer.
    pub(crate) fn set_output(&self, output: Value) {
        *lock(&self.output) = output;
    }

    /// What `wait` and `join` answer.
    pub(crate) fn output(&self) -> Value {
        lock(&self.output).clone()
    }

    /// Marks the run finished, ends the live readers and wakes everyone waiting.
    pub(crate) fn finish(&self) {
        lock(&self.events).live = None;
        self.done.send_modify(|at| {
            at.get_or_insert_with(Instant::now);
        });
    }

    /// How long ago the run finished; `None` while it has not.
    pub(crate) fn finished_for(&self, now: Instant) -> Option<std::time::Duration> {
        self.done.borrow().map(|at| now.saturating_duration_since(at))
    }

    /// Drops the events kept for late readers; the record stays.
    pub(crate) fn forget_events(&self) {
        lock(&self.events).log.forget();
    }

    /// Waits until the run has finished.
    pub(crate) async fn wait(&self) {
        let mut rx = self.done.subscribe();
        // An error means the sender is gone, which only happens with the handle itself.
        let _ = rx.wait_for(Option::is_some).await;
    }

    /// Asks the run to stop; a run not started yet stops before it starts.
    pub(crate) fn request_stop(&self, how: Stop) {
        self.stop.send_replace(Some(how));
    }

    /// How the run was asked to stop, if it was.
    pub(crate) fn stop_requested(&self) -> Option<Stop> {
        *self.stop.borrow()
    }

    /// A receiver of stop requests.
    pub(crate) fn stop_signal(&self) -> watch::Receiver<Option<Stop>> {
        self.stop.subscribe()
    }

    /// The run's events after the one with id `after` (from the first when `None` or not an id
    /// of this run), ending when the run ends: the kept ones first, then each event as it
    /// happens. A reader that falls more than [`LIVE_BACKLOG`] events behind goes on from the
    /// kept log, so it skips the partials of a message that a later one stands in for.
    pub(crate) fn frames(self: Arc<Self>, after: Option<&str>) -> Frames {
        let next = after.and_then(|id| id.parse::<u64>().ok()).map_or(0, |last| last.saturating_add(1));
        let (kept, live) = {
            let events = lock(&self.events);
            (events.log.from(next), events.live.as_ref().map(broadcast::Sender::subscribe))
        };
        let mut reader = Reader { run: self, next, live };
        let kept = futures_util::stream::iter(reader.fresh(kept));
        let live = futures_util::stream::unfold(reader, |mut reader| async move {
            let batch = reader.read().await?;
            Some((futures_util::stream::iter(batch), reader))
        });
        kept.chain(live.flatten()).boxed()
    }
}

/// A client's place in a run's events.
struct Reader {
    run: Arc<RunHandle>,
    /// The id of the next event the client wants.
    next: u64,
    live: Option<broadcast::Receiver<Arc<Entry>>>,
}

impl Reader {
    /// The entries the client has not read yet, as frames, moving its place past them.
    fn fresh(&mut self, entries: Vec<Arc<Entry>>) -> Vec<Frame> {
        let mut frames = Vec::with_capacity(entries.len());
        for e in entries {
            if e.seq >= self.next {
                self.next = e.seq + 1;
                frames.push(Frame { id: e.seq.to_string(), event: e.event.clone(), data: e.data.clone() });
            }
        }
        frames
    }

    /// The next frames; `None` when the run has ended and everything was read.
    async fn read(&mut self) -> Option<Vec<Frame>> {
        loop {
            let live = self.live.as_mut()?;
            let entries = match live.recv().await {
                Ok(entry) => vec![entry],
                Err(broadcast::error::RecvError::Lagged(_)) => lock(&self.run.events).log.from(self.next),
                Err(broadcast::error::RecvError::Closed) => {
                    // The run finished; the kept log holds whatever the feed did not deliver.
                    self.live = None;
                    lock(&self.run.events).log.from(self.next)
                }
            };
            let frames = self.fresh(entries);
            if !frames.is_empty() {
                return Some(frames);
            }
        }
    }
}
