//! [`FakeChatModel`]: a scripted chat model for tests.

use std::collections::VecDeque;
use std::sync::Arc;

use mnemograph_core::messages::{ChatCall, Message, MessageType};
use mnemograph_core::{BoxError, Runtime};
use parking_lot::Mutex;

/// A chat model that replies from a script, in order, and records what it was asked.
///
/// It is a [`ChatCall`], so code that asks a model on the side (a memory decider, a summarizer)
/// can be tested with it directly.
///
/// It streams each reply word by word through [`Runtime::stream_message`], so tests of the
/// `messages` stream mode see real chunks. When the script runs out it echoes the last human
/// message, so long-running tests (benchmarks, soak tests) never starve.
///
/// ```
/// use mnemograph_core::messages::Message;
/// use mnemograph_test::FakeChatModel;
///
/// let model = FakeChatModel::new([Message::ai("hello"), Message::ai("bye")]);
/// assert_eq!(model.reply(&[Message::human("hi")]).text(), "hello");
/// assert_eq!(model.reply(&[Message::human("hi")]).text(), "bye");
/// assert_eq!(model.reply(&[Message::human("again")]).text(), "echo: again");
/// assert_eq!(model.calls().len(), 3);
/// ```
#[derive(Debug, Clone, Default)]
pub struct FakeChatModel {
    script: Arc<Mutex<VecDeque<Message>>>,
    calls: Arc<Mutex<Vec<Vec<Message>>>>,
}

impl FakeChatModel {
    /// A model that replies with `script`, one message per call.
    pub fn new(script: impl IntoIterator<Item = Message>) -> Self {
        Self { script: Arc::new(Mutex::new(script.into_iter().collect())), calls: Arc::default() }
    }

    /// A model with no script: it always echoes.
    pub fn echo() -> Self {
        Self::default()
    }

    /// The next reply to `messages` (records the call).
    pub fn reply(&self, messages: &[Message]) -> Message {
        self.calls.lock().push(messages.to_vec());
        self.script.lock().pop_front().unwrap_or_else(|| {
            let last = messages.iter().rev().find(|m| m.kind() == MessageType::Human).map(Message::text);
            Message::ai(format!("echo: {}", last.unwrap_or_default()))
        })
    }

    /// Replies and streams the reply's text as word chunks to the run's `messages` stream. The
    /// chunks carry the reply's id (a fresh one when the script gave none), as a real model's
    /// do, so the stream shows the reply once.
    pub async fn stream_reply<C>(&self, messages: &[Message], runtime: &Runtime<C>) -> Message {
        let mut reply = self.reply(messages);
        let id = reply.id().map_or_else(|| format!("run-{}", uuid::Uuid::new_v4()), str::to_owned);
        reply.set_id(id.clone());
        let text = reply.text();
        let mut start = 0;
        for (i, _) in text.match_indices(' ').chain(std::iter::once((text.len(), ""))) {
            let end = (i + 1).min(text.len());
            if end > start {
                runtime.stream_message(Message::ai(&text[start..end]).with_id(id.clone()));
                // Yield between chunks, as a real network stream would.
                tokio::task::yield_now().await;
            }
            start = end;
        }
        reply
    }

    /// Every call so far: the messages the model was given.
    pub fn calls(&self) -> Vec<Vec<Message>> {
        self.calls.lock().clone()
    }

    /// Replies still in the script.
    pub fn remaining(&self) -> usize {
        self.script.lock().len()
    }
}

impl ChatCall for FakeChatModel {
    async fn call(&self, messages: Vec<Message>) -> Result<Message, BoxError> {
        Ok(self.reply(&messages))
    }
}
