//! The onion of `wrap_model_call` / `wrap_tool_call`: requests, responses and the `next`
//! handles.

use std::sync::Arc;

use mnemograph_core::messages::{Message, ToolCall};
use mnemograph_core::{BoxError, Runtime};
use mnemograph_models::{ChatModelExt, ChatRequest, SharedChatModel, ToolChoice, ToolNode, ToolSpec};

use super::DynMiddleware;
use crate::state::AgentState;

/// One model call as middleware sees it (LangChain's `ModelRequest`). Change any field before
/// passing it on: the change affects this call only, never the state.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The model to call.
    pub model: SharedChatModel,
    /// The system prompt, sent first.
    pub system_prompt: Option<String>,
    /// The conversation the model sees.
    pub messages: Vec<Message>,
    /// The tools on offer.
    pub tools: Vec<ToolSpec>,
    /// Tool choice.
    pub tool_choice: Option<ToolChoice>,
    /// The agent's state when the model node started (read-only).
    pub state: Arc<AgentState>,
    /// The model node's runtime (stream writer, task facts).
    pub runtime: Runtime,
}

impl ModelRequest {
    /// The request the model receives: the system prompt, then the messages.
    pub fn to_chat_request(&self) -> ChatRequest {
        let mut messages = Vec::with_capacity(self.messages.len() + 1);
        messages.extend(self.system_prompt.as_deref().map(Message::system));
        messages.extend(self.messages.iter().cloned());
        let mut request = ChatRequest::new(messages).with_tools(self.tools.clone());
        request.tool_choice.clone_from(&self.tool_choice);
        request
    }
}

/// What the model call produced (LangChain's `ModelResponse`): the messages added to the
/// state, the AI reply last.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ModelResponse {
    /// Added to the conversation, in order.
    pub messages: Vec<Message>,
}

impl ModelResponse {
    /// A response of one AI message.
    pub fn new(message: Message) -> Self {
        Self { messages: vec![message] }
    }
    /// The last message (the AI reply), if any.
    pub fn reply(&self) -> Option<&Message> {
        self.messages.last()
    }
}

/// The rest of the model-call onion: the middlewares inside this one, then the model.
/// `Copy`, so a middleware may call it more than once (a retry).
#[derive(Clone, Copy)]
pub struct ModelNext<'a> {
    /// Middlewares still to run, outermost first.
    pub(crate) rest: &'a [Arc<dyn DynMiddleware>],
}

impl std::fmt::Debug for ModelNext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelNext").field("remaining", &self.rest.len()).finish()
    }
}

impl ModelNext<'_> {
    /// Runs the inner layers and the model.
    ///
    /// # Errors
    /// An inner middleware's error or the model's ([`mnemograph_models::Error`], boxed).
    pub async fn run(self, request: ModelRequest) -> Result<ModelResponse, BoxError> {
        match self.rest.split_first() {
            Some((outer, rest)) => outer.wrap_model_call_boxed(request, ModelNext { rest }).await,
            None => {
                let chat = request.to_chat_request();
                let reply = request.model.invoke_in_graph(chat, &request.runtime).await?;
                Ok(ModelResponse::new(reply))
            }
        }
    }
}

/// One tool call as middleware sees it (LangChain's `ToolCallRequest`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ToolRequest {
    /// The call; edit it to change what runs.
    pub call: ToolCall,
    /// The agent's state when the tools node started (read-only).
    pub state: Arc<AgentState>,
    /// The tools node's runtime.
    pub runtime: Runtime,
}

/// The rest of the tool-call onion: inner middlewares, then the tool.
#[derive(Clone, Copy)]
pub struct ToolNext<'a> {
    /// Middlewares still to run, outermost first.
    pub(crate) rest: &'a [Arc<dyn DynMiddleware>],
    /// The tools.
    pub(crate) tools: &'a ToolNode,
}

impl std::fmt::Debug for ToolNext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolNext").field("remaining", &self.rest.len()).finish()
    }
}

impl ToolNext<'_> {
    /// Runs the inner layers and the tool. Never fails: a failing tool gives a ToolMessage with
    /// status `error`.
    pub async fn run(self, request: ToolRequest) -> Message {
        match self.rest.split_first() {
            Some((outer, rest)) => {
                outer.wrap_tool_call_boxed(request, ToolNext { rest, tools: self.tools }).await
            }
            None => self.tools.call(&request.call).await,
        }
    }
}
