//! A task's writes as LangGraph's pending writes (`(channel, value)` pairs) and back, so a step
//! interrupted midway resumes without re-running the tasks that finished.

use super::{field, join, sends};
use crate::checkpoint::PendingWrite;
use crate::command::{Command, Goto};
use crate::constants::{END, START};
use crate::error::{Error, Result};
use crate::pregel::plan::{ChannelKind, Layout};
use crate::pregel::task::TaskWrites;
use crate::value::ChannelValue;
use crate::State;

/// The pending writes of a finished task, as `(channel, value)` pairs in write order.
pub(crate) fn writes_to_pending<S: State, C>(
    layout: &Layout<S, C>,
    w: &TaskWrites<S>,
) -> Result<Vec<(String, ChannelValue)>> {
    let mut out = Vec::new();
    for sw in &w.state {
        field::pending::<S>(sw, &mut out);
    }
    for c in &w.channels {
        out.push((String::from(&*layout.channels[*c].name), ChannelValue::Null));
    }
    for (c, bit) in &w.joins {
        if let ChannelKind::Join { sources } = &layout.channels[*c].kind {
            out.push((String::from(&*layout.channels[*c].name), join::pending(sources, *bit)));
        }
    }
    for p in &w.pushes {
        out.push((String::from(&*layout.channels[layout.tasks_channel].name), sends::pending(p)?));
    }
    Ok(out)
}

/// A command given as input, as the null task's pending writes in LangGraph's order
/// (`map_command`): a `branch:to:<node>` write holding `"__start__"` or a push per destination,
/// then the updates. A destination of END is kept, as LangGraph keeps it; no channel reads it.
///
/// # Errors
/// [`Error::UnknownNode`] for a destination that is no node of the graph.
pub(crate) fn command_to_pending<S: State, C>(
    layout: &Layout<S, C>,
    command: &Command<S>,
) -> Result<Vec<(String, ChannelValue)>> {
    let mut out = Vec::new();
    for goto in &command.goto {
        match goto {
            Goto::Node(node) => {
                if node != END && layout.node(node).is_none() {
                    return Err(Error::UnknownNode(node.clone()));
                }
                out.push((format!("branch:to:{node}"), ChannelValue::new(START)));
            }
            Goto::Push(p) => {
                if layout.node(&p.node).is_none() {
                    return Err(Error::UnknownNode(p.node.clone()));
                }
                out.push((String::from(&*layout.channels[layout.tasks_channel].name), sends::pending(p)?));
            }
        }
    }
    for w in &command.update {
        field::pending::<S>(w, &mut out);
    }
    Ok(out)
}

/// Rebuilds a task's writes from its stored pending writes.
pub(crate) fn pending_to_writes<S: State, C>(
    layout: &Layout<S, C>,
    writes: &[&PendingWrite],
) -> Result<TaskWrites<S>> {
    let mut w = TaskWrites::empty();
    for pw in writes {
        let Some(&i) = layout.channel_index.get(pw.channel.as_str()) else { continue };
        match &layout.channels[i].kind {
            ChannelKind::Field(f) => w.state.push(field::from_pending::<S>(*f, &pw.value)?),
            ChannelKind::Branch | ChannelKind::Deferred => w.channels.push(i),
            ChannelKind::Join { sources } => {
                if let Some(bit) = join::from_pending(sources, &pw.value)? {
                    w.joins.push((i, bit));
                }
            }
            ChannelKind::Tasks => w.pushes.push(sends::from_pending(&pw.value)?),
            ChannelKind::Start => {}
        }
    }
    Ok(w)
}
