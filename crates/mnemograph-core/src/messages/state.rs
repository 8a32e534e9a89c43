//! [`MessagesState`]: the common one-field state, written by hand.
//!
//! This is exactly what `#[derive(State)]` generates for
//! `struct MessagesState { #[reducer(add_messages)] messages: Vec<Message> }`, spelled out so the
//! crate builds without the `macros` feature and so users can see that nothing in the derive is
//! magic.

use super::{add_messages, Message};
use crate::__private::{reduce, ReducerOutput};
use crate::command::Input;
use crate::command::{IntoNodeOutput, NodeOutput};
use crate::state::{Field, FieldSet, InvalidUpdate, StateWrite};
use crate::value::{ChannelValue, ValueError};
use crate::State;

/// A state holding only a conversation (LangGraph's `MessagesState`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessagesState {
    /// The conversation, merged with [`add_messages`].
    pub messages: Vec<Message>,
}

/// Update for [`MessagesState`].
#[derive(Debug, Clone, Default)]
pub struct MessagesStateUpdate {
    /// Messages to merge into the conversation.
    pub messages: Option<Vec<Message>>,
}

impl MessagesStateUpdate {
    /// An update that merges `messages`.
    pub fn messages(messages: impl Into<Vec<Message>>) -> Self {
        Self { messages: Some(messages.into()) }
    }
}

impl State for MessagesState {
    type Update = MessagesStateUpdate;
    const FIELDS: &'static [Field] = &[Field::reducer("messages")];

    fn apply(&mut self, writes: Vec<StateWrite<Self::Update>>) -> Result<FieldSet, InvalidUpdate> {
        let values: Vec<(Vec<Message>, bool)> =
            writes.into_iter().filter_map(|w| w.update.messages.map(|m| (m, w.overwrite))).collect();
        let mut written = FieldSet::EMPTY;
        if reduce("messages", &mut self.messages, values, |l, r| add_messages(l, r).into_reducer_result())? {
            written.insert(0);
        }
        Ok(written)
    }

    fn written(update: &Self::Update) -> FieldSet {
        let mut s = FieldSet::EMPTY;
        if update.messages.is_some() {
            s.insert(0);
        }
        s
    }

    fn get_field(&self, index: usize) -> ChannelValue {
        match index {
            0 => ChannelValue::new(self.messages.clone()),
            _ => ChannelValue::Null,
        }
    }

    fn set_field(&mut self, index: usize, value: &ChannelValue) -> Result<(), ValueError> {
        if index == 0 {
            self.messages = value.decode()?;
        }
        Ok(())
    }

    fn update_values(update: &Self::Update) -> Vec<(usize, ChannelValue)> {
        update.messages.iter().map(|m| (0, ChannelValue::new(m.clone()))).collect()
    }

    fn update_from_value(index: usize, value: &ChannelValue) -> Result<Self::Update, ValueError> {
        Ok(match index {
            0 => MessagesStateUpdate { messages: Some(value.decode()?) },
            _ => MessagesStateUpdate::default(),
        })
    }
}

impl IntoNodeOutput<MessagesState> for MessagesStateUpdate {
    fn into_node_output(self) -> NodeOutput<MessagesState> {
        NodeOutput::update(self)
    }
}

impl IntoNodeOutput<MessagesState> for Option<MessagesStateUpdate> {
    fn into_node_output(self) -> NodeOutput<MessagesState> {
        self.map_or_else(NodeOutput::empty, NodeOutput::update)
    }
}

impl From<MessagesStateUpdate> for Input<MessagesState> {
    fn from(u: MessagesStateUpdate) -> Self {
        Input::Update(u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RunConfig, StateGraph, START};

    #[tokio::test]
    async fn messages_state_runs_a_graph() {
        async fn echo(s: MessagesState) -> crate::Result<MessagesStateUpdate> {
            let last = s.messages.last().map(Message::text).unwrap_or_default();
            Ok(MessagesStateUpdate::messages(vec![Message::ai(format!("echo: {last}"))]))
        }
        let g = StateGraph::<MessagesState>::new()
            .add_node("echo", echo)
            .add_edge(START, "echo")
            .compile()
            .unwrap();
        let out = g
            .invoke(MessagesStateUpdate::messages(vec![Message::human("hi")]), &RunConfig::new())
            .await
            .unwrap();
        assert_eq!(out.messages.len(), 2);
        assert_eq!(out.messages[1].text(), "echo: hi");
    }
}
