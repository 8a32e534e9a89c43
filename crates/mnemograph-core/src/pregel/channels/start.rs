//! `__start__`: the run's input, written through the reducers in the first superstep and then
//! cleared (LangGraph's `EphemeralValue` for the input).

use serde_json::Value as Json;

use super::{ser, Channels};
use crate::error::Result;
use crate::value::ChannelValue;
use crate::State;
use mnemograph_checkpoint::__private as serde;

/// The input triggers `__start__` for one superstep.
pub(super) fn available<S: State>(ch: &Channels<S>) -> bool {
    ch.start.is_some()
}

/// The input as Python stores it: a map of the written fields (a later update of the same field
/// wins, as in a dict).
pub(super) fn value<S: State>(ch: &Channels<S>) -> Result<Option<ChannelValue>> {
    let Some(updates) = &ch.start else { return Ok(None) };
    let mut fields: Vec<(&str, ChannelValue)> = Vec::new();
    for u in updates {
        for (f, v) in S::update_values(u) {
            let name = S::FIELDS[f].name;
            match fields.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = v,
                None => fields.push((name, v)),
            }
        }
    }
    Ok(Some(serde::tree_value(&serde::fields_tree(fields).map_err(ser)?).map_err(ser)?))
}

/// Restores the input from its checkpoint value.
pub(super) fn restore<S: State>(ch: &mut Channels<S>, value: &ChannelValue) -> Result<()> {
    let mut updates = Vec::new();
    if let Json::Object(map) = value.to_json()? {
        for (k, v) in map {
            if let Some(f) = S::field_index(&k) {
                updates.push(S::update_from_value(f, &ChannelValue::Json(v.into()))?);
            }
        }
    }
    ch.start = Some(updates);
    Ok(())
}

/// Ends a step: a new input replaces the old one; an input nobody replaced is cleared, its
/// version moving on. Returns whether the channel was updated.
pub(super) fn finish_step<S: State>(
    ch: &mut Channels<S>,
    i: usize,
    input: Option<Vec<S::Update>>,
    next: u64,
) -> bool {
    let had = ch.start.take().is_some();
    match input {
        Some(input) => {
            ch.start = Some(input);
            true
        }
        None => {
            if had {
                ch.versions[i] = next;
            }
            false
        }
    }
}
