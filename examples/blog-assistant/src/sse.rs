//! The `POST /chat/stream` response body: the agent's run as Server-Sent Events, with a
//! stream-safety rule.
//!
//! **Stream safety.** The whole round lives inside the response stream. When the client
//! disconnects, hyper drops the body, which drops this stream: the `GraphStream` inside it is
//! dropped, and dropping it aborts the agent run. The run stores the round in Redis and the
//! archive in one commit at its very end ([`crate::archiving_saver`]), which runs as its own task
//! once started, so a half-told answer is stored nowhere and a client leaving during the commit
//! cannot cut it short. `done` is sent only once that commit succeeded; a failed one (the
//! archive refused the round, say) is an `error`, and both stores are as before the round.

use std::collections::VecDeque;
use std::convert::Infallible;

use axum::response::sse::Event;
use futures_util::Stream;
use futures_util::StreamExt;
use mnemograph_agent::AgentState;
use mnemograph_core::GraphStream;

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
    /// The run completed and its round is stored: `done` is next.
    Completed,
    /// Nothing more to send.
    Finished,
}

/// Drives one round.
struct Driver {
    /// The round.
    round: Round,
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
    run: GraphStream<AgentState>,
    thread: ThreadGuard,
) -> impl Stream<Item = Result<Event, Infallible>> + Send {
    let driver = Driver {
        round,
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
                    let event = self.done();
                    self.queue.push_back(event);
                }
                Phase::Finished => return None,
            }
        }
    }

    /// `done` for the stored round. The run fails without an answer (nothing is stored then),
    /// so a completed run always has one.
    fn done(&self) -> RoundEvent {
        match self.log.answer() {
            Some(answer) => {
                RoundEvent::Done { thread_id: self.round.thread_id.clone(), answer: answer.to_owned() }
            }
            None => RoundEvent::Error { message: crate::Error::NoAnswer.to_string() },
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
