//! A scripted chat call for the LLM decider, in the manner of mnemograph-test's `FakeChatModel`
//! (replies in order, calls recorded). Kept here because depending on mnemograph-test would change the
//! workspace lock file, which this crate does not own.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use mnemograph_checkpoint::messages::{ChatCall, Message};
use mnemograph_checkpoint::BoxError;

/// Replies from a script; records every call's messages. An exhausted script is an error, so a
/// test that calls the model more often than it meant to fails loudly.
#[derive(Debug, Clone, Default)]
pub struct Scripted {
    replies: Arc<Mutex<VecDeque<String>>>,
    calls: Arc<Mutex<Vec<Vec<Message>>>>,
}

impl Scripted {
    /// A model answering `replies`, one per call.
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(replies: I) -> Self {
        let replies = replies.into_iter().map(Into::into).collect();
        Self { replies: Arc::new(Mutex::new(replies)), calls: Arc::default() }
    }
    /// The messages of every call so far.
    pub fn calls(&self) -> Vec<Vec<Message>> {
        self.calls.lock().unwrap().clone()
    }
}

impl ChatCall for Scripted {
    async fn call(&self, messages: Vec<Message>) -> Result<Message, BoxError> {
        self.calls.lock().unwrap().push(messages);
        let reply = self.replies.lock().unwrap().pop_front();
        reply.map(Message::ai).ok_or_else(|| "script exhausted".into())
    }
}
