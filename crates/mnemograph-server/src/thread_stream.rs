//! A thread's stream (`GET /threads/{thread_id}/stream`): the events of every run of the thread,
//! one run after another as they come, each run's end marked by a `metadata` event
//! `{"status": "run_done", "run_id"}`, and the thread's state updates — open until the client
//! leaves, as LangGraph's server keeps it open.
//!
//! Each event's id is `<run_id>:<the run's own event id>` (`<run_id>:done` for a run's end), so a
//! client that reconnects with `Last-Event-ID` gets the kept events after that one: the rest of
//! that run's, then every later run's. `-` asks for every event still kept. Without it, the
//! stream follows the runs in progress or waiting, from their first kept event, and the runs
//! created after; the runs that ended before are left out.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{select, Either};
use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};

use crate::app::App;
use crate::auth::Grant;
use crate::error::{Result, ServerError};
use crate::handle::RunRef;
use crate::records::RunRecord;
use crate::sse::{Frame, Frames};

/// What the ids of state updates start with: they are not kept, so a client that reconnects
/// after one reads on as a new client.
const STATE_UPDATE: &str = "state_update";

/// How often the stream looks for new runs of its thread.
const POLL: Duration = Duration::from_millis(200);

/// The events a thread stream carries (`stream_modes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ThreadModes {
    /// `run_modes`: every event of the thread's runs, their ends included.
    run_modes: bool,
    /// `lifecycle`: only each run's first `metadata` event and its end.
    lifecycle: bool,
    /// `state_update`: the thread's state updates.
    state_update: bool,
}

impl ThreadModes {
    /// Reads `stream_modes`: names, each possibly a comma-separated list; `run_modes` when none.
    pub(crate) fn parse<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Self> {
        let mut modes = Self { run_modes: false, lifecycle: false, state_update: false };
        let mut any = false;
        for name in names.into_iter().flat_map(|n| n.split(',')).map(str::trim).filter(|n| !n.is_empty()) {
            any = true;
            match name {
                "run_modes" => modes.run_modes = true,
                "lifecycle" => modes.lifecycle = true,
                "state_update" => modes.state_update = true,
                other => return Err(ServerError::Unprocessable(format!("Invalid stream mode: {other}"))),
            }
        }
        modes.run_modes |= !any;
        Ok(modes)
    }

    /// Whether the stream carries `frame`.
    pub(crate) fn keeps(self, frame: &Frame) -> bool {
        if frame.event == "state_update" {
            return self.state_update;
        }
        if self.run_modes {
            return true;
        }
        self.lifecycle && frame.event == "metadata" && {
            let data: Value = serde_json::from_slice(&frame.data).unwrap_or(Value::Null);
            data.get("status").and_then(Value::as_str) == Some("run_done")
                || (data.get("attempt").is_some() && data.get("run_id").is_some())
        }
    }
}

/// Where a reconnecting client left the stream (`Last-Event-ID`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resume {
    /// A new client: the runs in progress or waiting, and those to come.
    Fresh,
    /// `-`: every event still kept.
    Everything,
    /// After an event of a run; after its end when `event` is `None`.
    After { run_id: String, event: Option<String> },
}

impl Resume {
    /// Reads `Last-Event-ID`; an id this stream never sends is unprocessable.
    pub(crate) fn parse(last_event_id: Option<&str>) -> Result<Self> {
        let Some(id) = last_event_id else { return Ok(Self::Fresh) };
        if id == "-" {
            return Ok(Self::Everything);
        }
        if id.starts_with(STATE_UPDATE) {
            return Ok(Self::Fresh);
        }
        match id.split_once(':') {
            Some((run_id, event)) if uuid::Uuid::parse_str(run_id).is_ok() && !event.is_empty() => {
                let event = (event != "done").then(|| event.to_owned());
                Ok(Self::After { run_id: run_id.to_owned(), event })
            }
            _ => Err(ServerError::Unprocessable(format!(
                "Invalid last-event-id: '{id}' is not an id of a thread stream"
            ))),
        }
    }

    /// Where to read `run` from (`Some(after)`, `after` being the run's own event id), or `None`
    /// to leave it out. `joined` tells a run the stream found when it opened.
    fn start(&self, run: &RunRecord, joined: bool) -> Option<Option<String>> {
        match self {
            Self::Fresh if joined && run.is_finished() => None,
            Self::Fresh | Self::Everything => Some(None),
            Self::After { run_id, event } => match run.run_id.as_str().cmp(run_id.as_str()) {
                std::cmp::Ordering::Less => None,
                std::cmp::Ordering::Equal => event.clone().map(Some),
                std::cmp::Ordering::Greater => Some(None),
            },
        }
    }
}

/// The stream of the thread `thread_id` as `grant` reaches it. It ends when the client leaves,
/// or once the thread is deleted and the events of its runs were sent.
pub(crate) fn frames(
    app: Arc<App>,
    thread_id: String,
    grant: Grant,
    modes: ThreadModes,
    resume: Resume,
) -> Frames {
    let (tx, rx) = mpsc::channel::<Frame>(64);
    tokio::spawn(follow(app, thread_id, grant, modes, resume, tx));
    futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|f| (f, rx)) }).boxed()
}

/// Forwards the thread's state updates as `state_update` events.
async fn forward_state_updates(app: Arc<App>, thread_id: String, tx: mpsc::Sender<Frame>) {
    let mut updates = app.thread_updates.subscribe();
    let mut n: u64 = 0;
    loop {
        let update = match select(Box::pin(updates.recv()), Box::pin(tx.closed())).await {
            Either::Left((Ok(update), _)) => update,
            // A stream that fell behind goes on from the next update.
            Either::Left((Err(broadcast::error::RecvError::Lagged(_)), _)) => continue,
            Either::Left((Err(broadcast::error::RecvError::Closed), _)) | Either::Right(_) => return,
        };
        if update.thread_id != thread_id {
            continue;
        }
        n += 1;
        let frame =
            Frame { id: format!("{STATE_UPDATE}:{n}"), event: "state_update".into(), data: update.data };
        if tx.send(frame).await.is_err() {
            return;
        }
    }
}

/// Finds the thread's runs as they come and forwards each one's events.
async fn follow(
    app: Arc<App>,
    thread_id: String,
    grant: Grant,
    modes: ThreadModes,
    resume: Resume,
    tx: mpsc::Sender<Frame>,
) {
    let _updates = modes.state_update.then(|| {
        AbortOnDrop(tokio::spawn(forward_state_updates(app.clone(), thread_id.clone(), tx.clone())))
    });
    let mut seen = HashSet::new();
    let mut joined = true;
    while !tx.is_closed() {
        let runs = match app.runs_of(&thread_id, &grant).await {
            Ok(runs) => runs,
            Err(ServerError::NotFound(_)) => return,
            Err(e) => {
                tracing::warn!(thread_id = %thread_id, error = %e, "listing a streamed thread's runs failed");
                Vec::new()
            }
        };
        // Oldest first, as they ran.
        for run in runs.iter().rev() {
            if seen.contains(&run.run_id) {
                continue;
            }
            let Some(after) = resume.start(run, joined) else {
                seen.insert(run.run_id.clone());
                continue;
            };
            match app.run(&thread_id, &run.run_id, &grant).await {
                Ok(found) => {
                    seen.insert(run.run_id.clone());
                    let forward = forward_run(found, run.run_id.clone(), after, modes, tx.clone());
                    // An ended run's kept events are sent before the next run's, in the order the
                    // runs ran; an open run's come as it runs, one run of a thread at a time.
                    if run.is_finished() {
                        forward.await;
                    } else {
                        tokio::spawn(forward);
                    }
                }
                // Swept or deleted meanwhile.
                Err(ServerError::NotFound(_)) => {
                    seen.insert(run.run_id.clone());
                }
                Err(e) => tracing::warn!(run_id = %run.run_id, error = %e, "reading a streamed run failed"),
            }
        }
        joined = false;
        if let Either::Right(_) = select(Box::pin(tokio::time::sleep(POLL)), Box::pin(tx.closed())).await {
            return;
        }
    }
}

/// Stops its task when dropped: the state updates of a thread whose stream ended.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Forwards one run's events after `after`, then its end.
async fn forward_run(
    run: RunRef,
    run_id: String,
    after: Option<String>,
    modes: ThreadModes,
    tx: mpsc::Sender<Frame>,
) {
    let mut frames = run.frames(after.as_deref());
    loop {
        let next = match select(frames.next(), Box::pin(tx.closed())).await {
            Either::Left((next, _)) => next,
            Either::Right(_) => return,
        };
        let Some(frame) = next else { break };
        let frame = Frame { id: format!("{run_id}:{}", frame.id), ..frame };
        if modes.keeps(&frame) && tx.send(frame).await.is_err() {
            return;
        }
    }
    let done = json!({ "status": "run_done", "run_id": run_id });
    let done =
        Frame { id: format!("{run_id}:done"), event: "metadata".into(), data: done.to_string().into() };
    if modes.keeps(&done) {
        let _ = tx.send(done).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(event: &str, data: &Value) -> Frame {
        Frame { id: "x".into(), event: event.into(), data: data.to_string().into() }
    }

    fn record(run_id: &str, status: &'static str) -> RunRecord {
        RunRecord {
            run_id: run_id.into(),
            thread_id: "t".into(),
            assistant_id: "a".into(),
            metadata: serde_json::Map::new(),
            status,
            kwargs: Value::Null,
            multitask_strategy: "enqueue".into(),
            created_at: String::new(),
            updated_at: String::new(),
        }
    }

    #[test]
    fn thread_stream_modes_are_langgraphs_and_run_modes_by_default() {
        let all = ThreadModes::parse([]).unwrap();
        assert!(all.keeps(&frame("updates", &json!({}))) && !all.keeps(&frame("state_update", &json!({}))));
        let life = ThreadModes::parse(["lifecycle"]).unwrap();
        assert!(life.keeps(&frame("metadata", &json!({"run_id": "r", "attempt": 1}))));
        assert!(life.keeps(&frame("metadata", &json!({"run_id": "r", "status": "run_done"}))));
        assert!(!life.keeps(&frame("values", &json!({}))));
        let both = ThreadModes::parse(["run_modes,state_update"]).unwrap();
        assert!(both.keeps(&frame("state_update", &json!({}))) && both.keeps(&frame("values", &json!({}))));
        assert!(matches!(ThreadModes::parse(["events"]), Err(ServerError::Unprocessable(_))));
    }

    #[test]
    fn last_event_id_resumes_after_a_run_event_or_a_run_end() {
        let (older, run, newer) = (
            "01000000-0000-7000-8000-000000000000",
            "02000000-0000-7000-8000-000000000000",
            "03000000-0000-7000-8000-000000000000",
        );
        let after = Resume::parse(Some(&format!("{run}:4"))).unwrap();
        assert_eq!(after.start(&record(older, "success"), true), None);
        assert_eq!(after.start(&record(run, "running"), true), Some(Some("4".into())));
        assert_eq!(after.start(&record(newer, "success"), true), Some(None));
        let done = Resume::parse(Some(&format!("{run}:done"))).unwrap();
        assert_eq!(done.start(&record(run, "success"), true), None);
        assert_eq!(Resume::parse(Some("-")).unwrap().start(&record(older, "success"), true), Some(None));
        assert_eq!(Resume::parse(Some("state_update:3")).unwrap(), Resume::Fresh);
        assert!(matches!(Resume::parse(Some("12-0")), Err(ServerError::Unprocessable(_))));
    }

    #[test]
    fn a_new_reader_leaves_out_the_runs_that_ended_before_it_joined() {
        let fresh = Resume::Fresh;
        assert_eq!(fresh.start(&record("r", "success"), true), None);
        assert_eq!(fresh.start(&record("r", "pending"), true), Some(None));
        assert_eq!(fresh.start(&record("r", "success"), false), Some(None), "a run that came and went since");
    }
}
