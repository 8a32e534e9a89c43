//! A model for tests of the agent's extra model calls: requests whose system prompt is one of the
//! agent's fixed prompts (importance, summary, supersession) are answered from a mnemograph-test
//! `FakeChatModel` script; conversation requests are answered by the `OfflineModel` and recorded.

use std::sync::{Arc, Mutex};

use memory_agent::{OfflineModel, IMPORTANCE_PROMPT};
use mnemograph_core::messages::{Message, MessageType};
use mnemograph_memory::{SUMMARY_PROMPT, SUPERSEDE_PROMPT};
use mnemograph_models::{ChatModel, ChatModelExt, ChatRequest, Result, SharedChatModel};
use mnemograph_test::FakeChatModel;

/// A scripted reply that makes the model call fail instead.
pub const FAIL: &str = "<fail>";

/// See the module docs.
#[derive(Debug, Clone, Default)]
pub struct Scripted {
    /// Replies to importance requests, in order.
    pub importance: FakeChatModel,
    /// Replies to summary requests, in order.
    pub summary: FakeChatModel,
    /// Replies to supersession requests (the update path's decider), in order.
    pub decide: FakeChatModel,
    /// Every conversation request, in order.
    pub requests: Arc<Mutex<Vec<ChatRequest>>>,
    /// Every importance request, in order.
    pub scored: Arc<Mutex<Vec<ChatRequest>>>,
}

impl Scripted {
    /// Importance replies from `importance`, summaries from `summary`.
    pub fn new<'a>(
        importance: impl IntoIterator<Item = &'a str>,
        summary: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let script = |replies: Vec<&str>| FakeChatModel::new(replies.into_iter().map(Message::ai));
        Self {
            importance: script(importance.into_iter().collect()),
            summary: script(summary.into_iter().collect()),
            decide: FakeChatModel::default(),
            requests: Arc::default(),
            scored: Arc::default(),
        }
    }

    /// Supersession replies from `decide`, in order.
    #[must_use]
    pub fn with_decisions<'a>(mut self, decide: impl IntoIterator<Item = &'a str>) -> Self {
        self.decide = FakeChatModel::new(decide.into_iter().map(Message::ai));
        self
    }

    /// The model as the agent holds it.
    pub fn shared(&self) -> SharedChatModel {
        self.clone().shared()
    }

    /// The conversation requests so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// The importance requests so far.
    pub fn scored(&self) -> Vec<ChatRequest> {
        self.scored.lock().unwrap().clone()
    }
}

fn scripted(fake: &FakeChatModel, request: &ChatRequest) -> Result<Message> {
    let reply = fake.reply(&request.messages);
    if reply.text() == FAIL {
        return Err(mnemograph_models::Error::Api {
            status: 503,
            message: "scripted failure".to_owned(),
            kind: None,
            code: None,
        });
    }
    Ok(reply)
}

impl ChatModel for Scripted {
    async fn invoke(&self, request: ChatRequest) -> Result<Message> {
        let system = request.messages.first().filter(|m| m.kind() == MessageType::System).map(Message::text);
        match system.as_deref() {
            Some(IMPORTANCE_PROMPT) => {
                self.scored.lock().unwrap().push(request.clone());
                scripted(&self.importance, &request)
            }
            Some(SUMMARY_PROMPT) => scripted(&self.summary, &request),
            Some(SUPERSEDE_PROMPT) => scripted(&self.decide, &request),
            _ => {
                self.requests.lock().unwrap().push(request.clone());
                OfflineModel.invoke(request).await
            }
        }
    }
}
