//! [`AgentState`]: the state of an agent graph.

use mnemograph_core::messages::Message;
use mnemograph_core::prelude::*;
use mnemograph_models::HasMessages;
use serde::{Deserialize, Serialize};

/// Where a middleware hook sends control instead of the next node (LangChain's `jump_to`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum JumpTo {
    /// The start of the model loop (the first `before_model` hook, or the model).
    Model,
    /// The tools node.
    Tools,
    /// Leave the loop: the `after_agent` hooks, then the end.
    End,
}

/// The state of an agent graph (LangChain's `AgentState`): the conversation, merged with
/// `add_messages`, and the pending jump.
///
/// `jump_to` is written by every middleware hook node (its jump, or `None`), and read only by
/// the edge right after that node, so it acts like LangChain's ephemeral channel: a jump never
/// outlives the step that asked for it.
#[derive(State, Clone, Debug, Default, PartialEq)]
pub struct AgentState {
    /// The conversation.
    #[reducer(add_messages)]
    pub messages: Vec<Message>,
    /// The jump asked for by the hook that ran last.
    pub jump_to: Option<JumpTo>,
}

impl HasMessages for AgentState {
    fn messages(&self) -> &[Message] {
        &self.messages
    }
    fn messages_update(messages: Vec<Message>) -> AgentStateUpdate {
        AgentStateUpdate::messages(messages)
    }
}

impl From<Message> for AgentStateUpdate {
    /// An update adding one message: `agent.invoke(Message::human("hi").into(), &config)`.
    fn from(message: Message) -> Self {
        Self::messages(vec![message])
    }
}

impl From<Vec<Message>> for AgentStateUpdate {
    /// An update adding these messages.
    fn from(messages: Vec<Message>) -> Self {
        Self::messages(messages)
    }
}
