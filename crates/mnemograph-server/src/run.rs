//! A run in progress: its record, its events (sent live to every client streaming it, and kept
//! in an [`EventLog`] so a client that joins late or reconnects reads them from any point), and
//! its cancellation.
//!
//! Each live reader has a queue of its own holding what it has not read yet, so a slow client
//! gets every event without the run waiting for it, and a fast one holds nothing. A queue that
//! grows past its reader's limit (`Limits::max_unread_event_bytes`) is given up: the reader goes
//! on from the kept log, which loses nothing while the log dropped nothing the reader had not
//! read (a message's latest partial stands in for the ones before it); otherwise the reader gets
//! an `error` event saying so and its stream ends, rather than going on with events missing.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use futures_util::StreamExt;

use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::event_log::{Entry, EventLog};
use crate::events::ApiModes;
use crate::handle::RunView;
use crate::records::RunRecord;
use crate::served::RunInput;
use crate::sse::{Frame, Frames};

/// What a run needs to start; taken when it starts.
pub struct Plan {
    /// The run's input.
    pub input: RunInput,
    /// Its configuration, thread and run ids included.
    pub config: mnemograph_core::RunConfig,
    /// The stream modes its events are shaped for.
    pub modes: ApiModes,
    /// The graph it runs, when the plan is run by the process that made it; a cluster's worker
    /// finds the graph from the run's payload.
    pub graph: Option<std::sync::Arc<dyn crate::served::ServedGraph>>,
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan").field("modes", &self.modes).finish_non_exhaustive()
    }
}

/// How a run is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Stopped; its checkpoints stay (`action = "interrupt"`).
    Interrupt,
    /// Stopped; its checkpoints and record are deleted (`action = "rollback"`).
    Rollback,
}

/// The kept events and the live readers, under one lock so that a reader that takes the kept
/// events and subscribes at once misses nothing in between.
struct Events {
    log: EventLog,
    /// The live readers' queues; `None` once the run has finished, which ends the live readers.
    live: Option<Vec<Feed>>,
    /// The most a live reader's queue may hold unread, in bytes of events.
    unread_limit: usize,
}

/// The sending side of one live reader's queue.
struct Feed {
    tx: mpsc::UnboundedSender<Arc<Entry>>,
    /// The bytes of events sent and not read yet.
    unread: Arc<AtomicUsize>,
    /// Set when the queue was given up for holding more than the limit.
    overrun: Arc<AtomicBool>,
}

impl Events {
    /// A new live reader's queue, fed from the next event on; `None` once the run has finished.
    fn subscribe(&mut self) -> Option<Live> {
        let feeds = self.live.as_mut()?;
        let (tx, rx) = mpsc::unbounded_channel();
        let (unread, overrun) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        feeds.push(Feed { tx, unread: unread.clone(), overrun: overrun.clone() });
        Some(Live { rx, unread, overrun })
    }
}

impl Feed {
    /// Sends `entry`; `false` once the reader is gone or its queue was given up.
    fn send(&self, entry: &Arc<Entry>, limit: usize) -> bool {
        let unread = self.unread.fetch_add(entry.weight(), Ordering::AcqRel) + entry.weight();
        if unread > limit {
            self.overrun.store(true, Ordering::Release);
            return false;
        }
        self.tx.send(entry.clone()).is_ok()
    }
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
    /// When the run may start (`after_seconds`); `None` for a run that may start at once.
    due: Option<Instant>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RunHandle {
    /// A run not started yet, keeping up to `log_bytes` of droppable events (see [`EventLog`]),
    /// and up to `unread_limit` bytes of events for each live reader that has not read them.
    pub(crate) fn new(record: RunRecord, plan: Plan, log_bytes: usize, unread_limit: usize) -> Self {
        Self {
            record: Mutex::new(record),
            plan: Mutex::new(Some(plan)),
            events: Mutex::new(Events {
                log: EventLog::new(log_bytes),
                live: Some(Vec::new()),
                unread_limit,
            }),
            output: Mutex::new(Value::Null),
            done: watch::channel(None).0,
            stop: watch::channel(None).0,
            due: None,
        }
    }

    /// The same run, not to start before `at`.
    pub(crate) fn not_before(mut self, at: Instant) -> Self {
        self.due = Some(at);
        self
    }

    /// Whether the run may start at `now`.
    pub(crate) fn is_due(&self, now: Instant) -> bool {
        self.due.is_none_or(|at| at <= now)
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

    /// Numbers and keeps an event, and sends it to the live readers; a reader that is gone, or
    /// whose queue is over its limit, is sent nothing more.
    pub(crate) fn push(&self, event: String, data: &Value) {
        let mut events = lock(&self.events);
        let entry = events.log.push(event, data);
        let limit = events.unread_limit;
        if let Some(live) = &mut events.live {
            live.retain(|feed| feed.send(&entry, limit));
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
    /// happens (see the module documentation for a reader that falls far behind).
    pub(crate) fn frames(self: Arc<Self>, after: Option<&str>) -> Frames {
        let next = after.and_then(|id| id.parse::<u64>().ok()).map_or(0, |last| last.saturating_add(1));
        let (kept, live) = {
            let mut events = lock(&self.events);
            let kept = events.log.from(next);
            (kept, events.subscribe())
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

impl RunView for Arc<RunHandle> {
    fn record(&self) -> RunRecord {
        RunHandle::record(self)
    }

    fn frames(&self, after: Option<&str>) -> Frames {
        RunHandle::frames(self.clone(), after)
    }

    fn output(&self) -> BoxFuture<'_, crate::Result<Value>> {
        Box::pin(async move {
            self.wait().await;
            Ok(RunHandle::output(self))
        })
    }

    fn stopper(&self) -> Box<dyn FnOnce() + Send> {
        let run = self.clone();
        Box::new(move || run.request_stop(Stop::Interrupt))
    }
}

/// A client's place in a run's events.
struct Reader {
    run: Arc<RunHandle>,
    /// The id of the next event the client wants.
    next: u64,
    /// Its live queue; `None` once the run finished or the stream ended.
    live: Option<Live>,
}

/// The receiving side of a live reader's queue.
struct Live {
    rx: mpsc::UnboundedReceiver<Arc<Entry>>,
    unread: Arc<AtomicUsize>,
    overrun: Arc<AtomicBool>,
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
            let entries = match live.rx.recv().await {
                Some(entry) => {
                    live.unread.fetch_sub(entry.weight(), Ordering::AcqRel);
                    vec![entry]
                }
                None if live.overrun.load(Ordering::Acquire) => {
                    // Given up for falling too far behind: the kept log serves the reader from
                    // here, with a new queue for what comes next, unless it lost events.
                    let mut events = lock(&self.run.events);
                    if events.log.dropped_from(self.next) {
                        self.live = None;
                        return Some(vec![self.lagged()]);
                    }
                    let kept = events.log.from(self.next);
                    self.live = events.subscribe();
                    kept
                }
                None => {
                    // The run finished; the kept log holds whatever the queue did not deliver.
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

    /// The `error` event that ends the stream of a reader that fell so far behind that events it
    /// had not read were dropped. Its id is the last event the reader got, so a client that
    /// reconnects with it reads the kept events from there on.
    fn lagged(&self) -> Frame {
        let data = json!({
            "error": "StreamLagged",
            "message": "this stream fell too far behind the run and events it had not read were dropped; \
                        reconnect with Last-Event-ID for the events still kept, or join the run for its result",
        });
        Frame {
            id: self.next.saturating_sub(1).to_string(),
            event: "error".to_owned(),
            data: data.to_string().into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Map;

    use super::*;

    /// A run keeping `log_bytes` of droppable events and `unread` bytes per live reader.
    fn run(log_bytes: usize, unread: usize) -> Arc<RunHandle> {
        let record = RunRecord {
            run_id: "r".into(),
            thread_id: "t".into(),
            assistant_id: "a".into(),
            metadata: Map::new(),
            status: "running",
            kwargs: Value::Null,
            multitask_strategy: "reject".into(),
            created_at: String::new(),
            updated_at: String::new(),
        };
        let plan = Plan {
            input: RunInput::Values(Map::new()),
            config: mnemograph_core::RunConfig::default(),
            modes: ApiModes::default(),
            graph: None,
        };
        Arc::new(RunHandle::new(record, plan, log_bytes, unread))
    }

    /// Pushes `n` token chunks (`messages` events, which the log may drop), then ends the run.
    fn tokens(run: &RunHandle, n: usize) {
        for i in 0..n {
            run.push("messages".into(), &json!([{ "id": "m", "content": format!("t{i} ") }, {}]));
        }
        run.finish();
    }

    /// Every frame of `frames`, read after the run ended.
    async fn all(frames: Frames) -> Vec<Frame> {
        frames.collect().await
    }

    /// The tokens the frames carry, in order.
    fn contents(frames: &[Frame]) -> Vec<String> {
        frames
            .iter()
            .filter(|f| f.event == "messages")
            .map(|f| {
                let data: Value = serde_json::from_slice(&f.data).unwrap();
                data[0]["content"].as_str().unwrap().to_owned()
            })
            .collect()
    }

    #[tokio::test]
    async fn a_reader_that_reads_nothing_while_the_run_streams_still_gets_every_event() {
        let run = run(usize::MAX / 2, 1 << 20);
        let frames = run.clone().frames(None);
        tokens(&run, 5_000);
        let got = all(frames).await;
        assert_eq!(contents(&got), (0..5_000).map(|i| format!("t{i} ")).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_reader_past_its_unread_limit_goes_on_from_the_kept_log_when_it_lost_nothing() {
        // The queue is given up after a few events; the log keeps all of them.
        let run = run(usize::MAX / 2, 200);
        let frames = run.clone().frames(None);
        tokens(&run, 1_000);
        let got = all(frames).await;
        assert_eq!(contents(&got).len(), 1_000, "every token, from the queue and then the log");
        let ids: Vec<u64> = got.iter().map(|f| f.id.parse().unwrap()).collect();
        assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "no event skipped or repeated");
    }

    #[tokio::test]
    async fn a_reader_that_lost_events_gets_a_stream_lagged_error_and_its_stream_ends() {
        // Both the reader's queue and the log are small: tokens it had not read are dropped.
        let run = run(2_000, 200);
        let frames = run.clone().frames(None);
        tokens(&run, 1_000);
        let got = all(frames).await;
        let last = got.last().expect("frames");
        assert_eq!(last.event, "error");
        let data: Value = serde_json::from_slice(&last.data).unwrap();
        assert_eq!(data["error"], "StreamLagged");
        let read = contents(&got);
        assert!(read.len() < 1_000, "it could not have read every token: {}", read.len());
        assert_eq!(
            read,
            (0..read.len()).map(|i| format!("t{i} ")).collect::<Vec<_>>(),
            "what it read has no gap"
        );
        assert_eq!(last.id, (read.len() - 1).to_string(), "the error names the last event read");
    }

    #[tokio::test]
    async fn a_reader_that_keeps_up_holds_nothing_and_gets_everything_under_a_tiny_limit() {
        let run = run(100, 200);
        let mut frames = run.clone().frames(None);
        let mut read = Vec::new();
        for i in 0..300 {
            run.push("messages".into(), &json!([{ "id": "m", "content": format!("t{i} ") }, {}]));
            read.push(frames.next().await.expect("a frame"));
        }
        run.finish();
        read.extend(all(frames).await);
        assert_eq!(contents(&read).len(), 300);
    }
}
