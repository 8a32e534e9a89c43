//! A scripted model built on mnemograph-test's `FakeChatModel`, and a recording middleware.

#![allow(dead_code, unreachable_pub, missing_docs, missing_debug_implementations)]

use std::sync::Arc;

use mnemograph_agent::{
    AgentState, Hook, HookResult, Middleware, ModelNext, ModelRequest, ModelResponse, ToolNext, ToolRequest,
};
use mnemograph_core::messages::Message;
use mnemograph_core::{BoxError, Runtime};
use mnemograph_models::{ChatChunk, ChatModel, ChatRequest, ChunkStream, Result};
use mnemograph_test::FakeChatModel;
use parking_lot::Mutex;

/// mnemograph-test's fake behind the `ChatModel` trait: `invoke` is its `reply`, `stream` splits the
/// reply's text into word chunks (tool calls on the last chunk), as a provider would.
#[derive(Clone, Debug, Default)]
pub struct Fake(pub FakeChatModel);

impl Fake {
    pub fn new(script: impl IntoIterator<Item = Message>) -> Self {
        Self(FakeChatModel::new(script))
    }
}

impl ChatModel for Fake {
    async fn invoke(&self, request: ChatRequest) -> Result<Message> {
        Ok(self.0.reply(&request.messages))
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChunkStream> {
        let reply = self.0.reply(&request.messages);
        let text = reply.text();
        let mut chunks: Vec<ChatChunk> = text.split_inclusive(' ').map(ChatChunk::text).collect();
        let mut last = ChatChunk::from_message(&reply.clone().with_tool_calls(Vec::new()));
        last.content = String::new();
        last.tool_calls = ChatChunk::from_message(&reply).tool_calls;
        chunks.push(last);
        for c in &mut chunks {
            c.id = reply.id().map(str::to_owned);
        }
        Ok(Box::pin(futures_util::stream::iter(chunks.into_iter().map(Ok))))
    }
}

/// Records every hook and wrapper it runs, in a shared log.
#[derive(Clone)]
pub struct Recorder {
    pub name: &'static str,
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Middleware for Recorder {
    fn name(&self) -> &str {
        self.name
    }
    fn hooks(&self) -> &'static [Hook] {
        &[Hook::BeforeAgent, Hook::BeforeModel, Hook::AfterModel, Hook::AfterAgent]
    }
    async fn before_agent(&self, _: &AgentState, rt: &Runtime) -> HookResult {
        self.log.lock().push(rt.node().to_owned());
        Ok(None)
    }
    async fn before_model(&self, _: &AgentState, rt: &Runtime) -> HookResult {
        self.log.lock().push(rt.node().to_owned());
        Ok(None)
    }
    async fn after_model(&self, _: &AgentState, rt: &Runtime) -> HookResult {
        self.log.lock().push(rt.node().to_owned());
        Ok(None)
    }
    async fn after_agent(&self, _: &AgentState, rt: &Runtime) -> HookResult {
        self.log.lock().push(rt.node().to_owned());
        Ok(None)
    }
    async fn wrap_model_call(
        &self,
        request: ModelRequest,
        next: ModelNext<'_>,
    ) -> std::result::Result<ModelResponse, BoxError> {
        self.log.lock().push(format!("{}.wrap_model>", self.name));
        let out = next.run(request).await;
        self.log.lock().push(format!("<{}.wrap_model", self.name));
        out
    }
    async fn wrap_tool_call(&self, request: ToolRequest, next: ToolNext<'_>) -> Message {
        self.log.lock().push(format!("{}.wrap_tool>", self.name));
        let out = next.run(request).await;
        self.log.lock().push(format!("<{}.wrap_tool", self.name));
        out
    }
}
