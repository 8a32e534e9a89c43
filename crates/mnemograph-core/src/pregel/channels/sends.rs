//! `__pregel_tasks`: the pushes for the next superstep (LangGraph's `Topic` of `Send`s), replaced
//! each step.

use serde_json::Value as Json;

use super::{ser, Channels};
use crate::checkpoint::CheckpointError;
use crate::command::Push;
use crate::error::{Error, Result};
use crate::value::ChannelValue;
use crate::State;
use mnemograph_checkpoint::__private as serde;

/// Pending pushes trigger push tasks.
pub(super) fn available<S: State>(ch: &Channels<S>) -> bool {
    !ch.pushes.is_empty()
}

/// A step starts applying: its pushes became its tasks and leave the topic. Returns whether
/// there were any.
pub(super) fn take<S: State>(ch: &mut Channels<S>) -> bool {
    !std::mem::take(&mut ch.pushes).is_empty()
}

/// A task pushed to the next step.
pub(super) fn write<S: State>(ch: &mut Channels<S>, pushes: Vec<Push<S>>) {
    ch.pushes.extend(pushes);
}

/// Ends a step: a topic emptied and not written again moves to version `next`.
pub(super) fn finish_step<S: State>(ch: &mut Channels<S>, i: usize, had: bool, updated: bool, next: u64) {
    if had && !updated {
        ch.versions[i] = next;
    }
}

/// Its checkpoint value: the pushes as a list of `Send`s, stored whenever the topic has a
/// version, empty or not, as Python stores it.
pub(super) fn value<S: State>(ch: &Channels<S>) -> Result<ChannelValue> {
    let pushes = ch.pushes.iter().map(push_tree).collect::<Result<_>>()?;
    serde::tree_value(&rmpv::Value::Array(pushes)).map_err(ser)
}

/// Restores the pushes.
pub(super) fn restore<S: State>(ch: &mut Channels<S>, value: &ChannelValue) -> Result<()> {
    if let Json::Array(items) = value.to_json()? {
        for item in &items {
            ch.pushes.push(push_from_json(item)?);
        }
    }
    Ok(())
}

/// The pending write of one push.
pub(super) fn pending<S: State>(push: &Push<S>) -> Result<ChannelValue> {
    serde::tree_value(&push_tree(push)?).map_err(ser)
}

/// A push rebuilt from its pending write.
pub(super) fn from_pending<S: State>(value: &ChannelValue) -> Result<Push<S>> {
    push_from_json(&value.to_json()?)
}

/// A push as Python's `Send(node, arg)`, `arg` holding every field of the pushed state.
fn push_tree<S: State>(p: &Push<S>) -> Result<rmpv::Value> {
    let fields = S::FIELDS.iter().enumerate().map(|(f, field)| (field.name, p.arg.get_field(f)));
    serde::send_value(&p.node, serde::fields_tree(fields).map_err(ser)?).map_err(ser)
}

fn push_from_json<S: State>(json: &Json) -> Result<Push<S>> {
    let node = json
        .get("node")
        .and_then(Json::as_str)
        .ok_or_else(|| Error::Checkpoint(CheckpointError::Corrupt("push without a node".into())))?;
    let mut arg = S::default();
    if let Some(Json::Object(fields)) = json.get("arg") {
        for (k, v) in fields {
            if let Some(f) = S::field_index(k) {
                arg.set_field(f, &ChannelValue::Json(v.clone().into()))?;
            }
        }
    }
    Ok(Push::new(node, arg))
}
