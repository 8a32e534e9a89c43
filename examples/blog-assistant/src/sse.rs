//! The `POST /chat/stream` response body: the agent's run as Server-Sent Events, with a
//! stream-safety rule.
//!
//! **Stream safety.** The whole round (the agent run, then the archive write) lives inside the
//! response stream. When the client disconnects, hyper drops the body, which drops this stream:
//! the `GraphStream` inside it is dropped, and dropping it aborts the agent run. The archive
//! write is reached only after the run's stream has been iterated to its end, so a half-told
//! answer is never archived. Once the run has completed, the write is spawned as its own task: a
//! client leaving during the write cannot cut the transaction short. The run commits its checkpoint
//! only when it completes (see [`crate::snapshot`]), so a cut-off or failed round leaves the
//! Redis snapshot as it was before the round, too.

use std::collections::VecDeque;
use std::convert::Infallible;

use axum::response::sse::Event;
use futures_util::Stream;
use futures_util::StreamExt;
use mnemograph_agent::AgentState;
use mnemograph_core::GraphStream;

use crate::archive::Archive;
use crate::locks::ThreadGuard;
use crate::round::{RoundEvent, RoundLog};

/// Who asked what, on which thread.
#[derive(Debug, Clone)]
pub struct Round {
    /// The user.
    pub user_id: String,
    /// The session.
    pub session_id: String,
    /// `user_id:session_id`.
    pub thread_id: String,
    /// The question.
    pub question: String,
}

/// Where a round is.
enum Phase {
    /// The agent is running.
    Running(GraphStream<AgentState>),
    /// The run completed; the archive write is next.
    Completed,
    /// Nothing more to send.
    Finished,
}

/// Drives one round.
struct Driver {
    /// The round.
    round: Round,
    /// Where completed rounds go.
    archive: Archive,
    /// Where the round is.
    phase: Phase,
    /// What the run produced.
    log: RoundLog,
    /// Events decided but not yet sent.
    queue: VecDeque<RoundEvent>,
    /// The thread's lock, released when the round's stream ends or is dropped.
    _thread: ThreadGuard,
}

/// The SSE events of one round whose agent run is `run` (already set to stream `messages` and
/// `updates`); `thread` is held until the stream ends or is dropped.
pub fn round_events(
    round: Round,
    archive: Archive,
    run: GraphStream<AgentState>,
    thread: ThreadGuard,
) -> impl Stream<Item = Result<Event, Infallible>> + Send {
    let driver = Driver {
        round,
        archive,
        phase: Phase::Running(run),
        log: RoundLog::default(),
        queue: VecDeque::new(),
        _thread: thread,
    };
    futures_util::stream::unfold(driver, |mut d| async move {
        let event = d.next().await?;
        Some((Ok(to_sse(&event)), d))
    })
}

impl Driver {
    /// The next event of the round, `None` after the last.
    async fn next(&mut self) -> Option<RoundEvent> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            match &mut self.phase {
                Phase::Running(run) => match run.next().await {
                    Some(Ok(event)) => {
                        let events = self.log.observe(event);
                        self.queue.extend(events);
                    }
                    Some(Err(e)) => {
                        let message = crate::Error::from(e).chain();
                        tracing::warn!(thread_id = %self.round.thread_id, error = %message, "agent run failed");
                        self.queue.push_back(RoundEvent::Error { message });
                        self.phase = Phase::Finished;
                    }
                    // Iterated to the end: the round completed.
                    None => {
                        self.queue.push_back(RoundEvent::Citations { citations: self.log.citations() });
                        self.phase = Phase::Completed;
                    }
                },
                Phase::Completed => {
                    self.phase = Phase::Finished;
                    let event = self.archive().await;
                    self.queue.push_back(event);
                }
                Phase::Finished => return None,
            }
        }
    }

    /// Archives the completed round; `done` on success, `error` otherwise.
    async fn archive(&mut self) -> RoundEvent {
        let Some(answer) = self.log.answer().map(str::to_owned) else {
            return RoundEvent::Error {
                message: "the model gave no answer; nothing was archived".to_owned(),
            };
        };
        let (archive, round, citations) = (self.archive.clone(), self.round.clone(), self.log.citations());
        let answer_copy = answer.clone();
        let write = tokio::spawn(async move {
            archive
                .save_round(&round.user_id, &round.session_id, &round.question, &answer_copy, &citations)
                .await
        });
        match write.await.map_err(crate::Error::from).and_then(|r| r) {
            Ok(()) => RoundEvent::Done { thread_id: self.round.thread_id.clone(), answer },
            Err(e) => {
                tracing::error!(thread_id = %self.round.thread_id, error = %e.chain(), "archiving the round failed");
                RoundEvent::Error { message: e.to_string() }
            }
        }
    }
}

/// The SSE frame of an event.
fn to_sse(event: &RoundEvent) -> Event {
    // Serializing these plain structs cannot fail; an empty object is a safe fallback anyway.
    let data = serde_json::to_string(event).unwrap_or_else(|_| "{}".to_owned());
    Event::default().event(event.name()).data(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_carry_the_event_name_and_json() {
        let event = RoundEvent::Token { text: "你好\n".to_owned() };
        let frame = format!("{:?}", to_sse(&event));
        assert!(frame.contains("token"), "{frame}");
        assert_eq!(serde_json::to_string(&event).unwrap(), r#"{"text":"你好\n"}"#);
    }
}
