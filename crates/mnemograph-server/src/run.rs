//! A run in progress: its record, the events it has emitted (kept, so a client that joins late or
//! reconnects reads them from any point), and its cancellation.

use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt;

use serde_json::Value;
use tokio::sync::watch;

use crate::events::ApiModes;
use crate::records::RunRecord;
use crate::served::RunInput;
use crate::sse::{Frame, Frames};

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

/// Events so far and whether the run has finished.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Progress {
    pub(crate) events: usize,
    pub(crate) done: bool,
}

/// A run and what clients can wait on.
pub(crate) struct RunHandle {
    pub(crate) record: Mutex<RunRecord>,
    pub(crate) plan: Mutex<Option<Plan>>,
    events: Mutex<Vec<(String, Value)>>,
    /// What `wait` and `join` answer: the final values, or `{"__error__": ...}`.
    output: Mutex<Value>,
    progress: watch::Sender<Progress>,
    stop: watch::Sender<Option<Stop>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RunHandle {
    pub(crate) fn new(record: RunRecord, plan: Plan) -> Self {
        Self {
            record: Mutex::new(record),
            plan: Mutex::new(Some(plan)),
            events: Mutex::new(Vec::new()),
            output: Mutex::new(Value::Null),
            progress: watch::channel(Progress::default()).0,
            stop: watch::channel(None).0,
        }
    }

    pub(crate) fn run_id(&self) -> String {
        lock(&self.record).run_id.clone()
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

    /// Records an event and wakes the readers.
    pub(crate) fn push(&self, event: String, data: Value) {
        let n = {
            let mut events = lock(&self.events);
            events.push((event, data));
            events.len()
        };
        self.progress.send_modify(|p| p.events = n);
    }

    /// Sets what `wait` and `join` answer.
    pub(crate) fn set_output(&self, output: Value) {
        *lock(&self.output) = output;
    }

    /// What `wait` and `join` answer.
    pub(crate) fn output(&self) -> Value {
        lock(&self.output).clone()
    }

    /// Marks the run finished and wakes everyone waiting.
    pub(crate) fn finish(&self) {
        self.progress.send_modify(|p| p.done = true);
    }

    /// Drops the events kept for late readers; the record stays.
    pub(crate) fn forget_events(&self) {
        *lock(&self.events) = Vec::new();
    }

    /// The events from index `from` on.
    pub(crate) fn events_from(&self, from: usize) -> Vec<(String, Value)> {
        lock(&self.events).get(from..).map(<[_]>::to_vec).unwrap_or_default()
    }

    /// A receiver of the run's progress.
    pub(crate) fn progress(&self) -> watch::Receiver<Progress> {
        self.progress.subscribe()
    }

    /// Waits until the run has finished.
    pub(crate) async fn wait(&self) {
        let mut rx = self.progress();
        // An error means the sender is gone, which only happens with the handle itself.
        let _ = rx.wait_for(|p| p.done).await;
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

    /// The run's events after the one with id `after` (from the first when `None`), ending when
    /// the run ends. An event's id is its index.
    pub(crate) fn frames(self: Arc<Self>, after: Option<&str>) -> Frames {
        let next = after.and_then(|id| id.parse::<usize>().ok()).map_or(0, |last| last + 1);
        let progress = self.progress();
        futures_util::stream::unfold((self, next, progress), |(run, next, mut progress)| async move {
            loop {
                // Read `done` before the events: a run pushes its last event before it is done,
                // so an empty read after `done` means nothing more will come.
                let done = progress.borrow_and_update().done;
                let events = run.events_from(next);
                if !events.is_empty() {
                    let frames: Vec<Frame> = events
                        .into_iter()
                        .enumerate()
                        .map(|(i, (event, data))| Frame { id: (next + i).to_string(), event, data })
                        .collect();
                    let next = next + frames.len();
                    return Some((futures_util::stream::iter(frames), (run, next, progress)));
                }
                if done || progress.changed().await.is_err() {
                    return None;
                }
            }
        })
        .flatten()
        .boxed()
    }
}
