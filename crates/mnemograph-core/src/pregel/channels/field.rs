//! A state field (LangGraph's `LastValue` or `BinaryOperatorAggregate`): the value lives in the
//! state struct, which applies its own reducers; the table keeps only the version.

use super::Channels;
use crate::error::Result;
use crate::state::StateWrite;
use crate::value::{ChannelValue, ValueError};
use crate::State;

/// A field can trigger once it was ever written.
pub(super) fn available<S: State>(ch: &Channels<S>, i: usize) -> bool {
    ch.versions[i] > 0
}

/// Restores field `f` from its checkpoint value.
pub(super) fn restore<S: State>(
    ch: &mut Channels<S>,
    f: usize,
    value: &ChannelValue,
) -> Result<(), ValueError> {
    ch.state.set_field(f, value)
}

/// The pending writes of one state write: a value per written field, wrapped as LangGraph's
/// `Overwrite` when the write bypasses the reducer.
pub(super) fn pending<S: State>(write: &StateWrite<S::Update>, out: &mut Vec<(String, ChannelValue)>) {
    for (f, v) in S::update_values(&write.update) {
        let v = if write.overwrite { ChannelValue::Overwrite(Box::new(v)) } else { v };
        out.push((S::FIELDS[f].name.to_owned(), v));
    }
}

/// A state write rebuilt from a pending write to field `f`.
pub(super) fn from_pending<S: State>(f: usize, value: &ChannelValue) -> Result<StateWrite<S::Update>> {
    let (value, overwrite) = match value {
        ChannelValue::Overwrite(inner) => (&**inner, true),
        other => (other, false),
    };
    Ok(StateWrite { update: S::update_from_value(f, value)?, overwrite })
}
