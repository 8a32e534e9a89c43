//! The messages a node writes, sent to the `messages` stream mode as LangGraph's message handler
//! sends them at a node's end: each message the node returns that the state it read did not hold
//! and that no chunk of the run streamed already, once. A message without an id gets one here, so
//! the message the stream shows and the one the state keeps are the same message.

use std::collections::HashSet;

use super::Loop;
use crate::messages::{Message, MessageType};
use crate::pregel::task::{Task, TaskWrites};
use crate::runtime::SideEvent;
use crate::stream::{EventMetadata, StreamMode};
use crate::value::{ChannelValue, ValueError};
use crate::State;

impl<S: State, C: Send + Sync + 'static> Loop<'_, S, C> {
    /// Streams the messages of `writes` that are new to the run (see the module), giving the ones
    /// without an id a fresh one in `writes` first. Nothing happens unless the run streams
    /// [`StreamMode::Messages`].
    pub(super) fn stream_written_messages(
        &self,
        t: &Task<S>,
        writes: &mut TaskWrites<S>,
        step: i64,
    ) -> Result<(), ValueError> {
        let (Some(sink), Some(side)) = (self.sink, &self.side) else { return Ok(()) };
        if !sink.wants(StreamMode::Messages) {
            return Ok(());
        }
        let mut read: Option<HashSet<String>> = None;
        let metadata = EventMetadata {
            node: self.layout.nodes[t.node].name.clone(),
            step,
            task_id: t.id.clone(),
            checkpoint_ns: self.namespace.clone(),
        };
        for write in &mut writes.state {
            let mut values = S::update_values(&write.update);
            let mut named = false;
            for (_, value) in &mut values {
                let Some(mut messages) = messages_in(value) else { continue };
                let read = read.get_or_insert_with(|| message_ids(&self.ch.state));
                let mut renamed = false;
                for message in &mut messages {
                    if message.kind() == MessageType::Remove {
                        continue;
                    }
                    if message.id().is_none() {
                        message.set_id(uuid::Uuid::new_v4().to_string());
                        renamed = true;
                    }
                    if !message.id().is_some_and(|id| read.contains(id)) {
                        side(SideEvent::Written(message.clone()), &metadata);
                    }
                }
                if renamed {
                    *value = ChannelValue::new(messages);
                    named = true;
                }
            }
            if named {
                write.update = S::update_from_values(&values)?;
            }
        }
        Ok(())
    }
}

/// The messages a written value holds: a list of messages, or one.
fn messages_in(value: &ChannelValue) -> Option<Vec<Message>> {
    if let Some(list) = value.downcast_ref::<Vec<Message>>() {
        return Some(list.clone());
    }
    value.downcast_ref::<Message>().map(|m| vec![m.clone()])
}

/// The ids of the messages `state` holds, in any field.
fn message_ids<S: State>(state: &S) -> HashSet<String> {
    let mut ids = HashSet::new();
    for i in 0..S::FIELDS.len() {
        let field = state.get_field(i);
        let held = match (field.downcast_ref::<Vec<Message>>(), field.downcast_ref::<Message>()) {
            (Some(list), _) => list.as_slice(),
            (None, Some(one)) => std::slice::from_ref(one),
            (None, None) => continue,
        };
        ids.extend(held.iter().filter_map(|m| m.id().map(str::to_owned)));
    }
    ids
}
