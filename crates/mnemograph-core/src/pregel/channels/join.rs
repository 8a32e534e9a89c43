//! `join:<a>+<b>:<c>`: a barrier (LangGraph's `NamedBarrierValue`) that is available once every
//! source wrote, then resets. The sources seen are bits of one word, in the order given.

use super::{ser, Channels};
use crate::error::Result;
use crate::value::{ChannelValue, ValueError};
use crate::State;
use mnemograph_checkpoint::__private as serde;

const fn full_mask(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// Available once every source wrote.
pub(super) fn available<S: State>(ch: &Channels<S>, i: usize, sources: &[String]) -> bool {
    ch.seen[i] == full_mask(sources.len())
}

/// Source `bit` wrote.
pub(super) fn write<S: State>(ch: &mut Channels<S>, i: usize, bit: u64) {
    ch.seen[i] |= bit;
}

/// The node waiting on it ran: the barrier starts over.
pub(super) fn consume<S: State>(ch: &mut Channels<S>, i: usize, next: u64) {
    if ch.seen[i] != 0 {
        ch.seen[i] = 0;
        ch.versions[i] = next;
    }
}

/// Its checkpoint value: the set of sources seen, stored whenever the barrier has a version,
/// empty or not, as Python stores it.
pub(super) fn value<S: State>(ch: &Channels<S>, i: usize, sources: &[String]) -> Result<ChannelValue> {
    let seen = sources
        .iter()
        .enumerate()
        .filter(|(b, _)| ch.seen[i] & (1 << b) != 0)
        .map(|(_, s)| rmpv::Value::from(s.as_str()))
        .collect();
    serde::tree_value(&serde::set_value(seen).map_err(ser)?).map_err(ser)
}

/// Restores the sources seen.
pub(super) fn restore<S: State>(
    ch: &mut Channels<S>,
    i: usize,
    sources: &[String],
    value: &ChannelValue,
) -> Result<(), ValueError> {
    let names: Vec<String> = value.decode()?;
    for (b, s) in sources.iter().enumerate() {
        if names.contains(s) {
            ch.seen[i] |= 1 << b;
        }
    }
    Ok(())
}

/// The pending write of source `bit`: the source's name.
pub(super) fn pending(sources: &[String], bit: u64) -> ChannelValue {
    ChannelValue::new(sources[bit.trailing_zeros() as usize].clone())
}

/// The bit of a pending write's source, if it is one of the barrier's.
pub(super) fn from_pending(sources: &[String], value: &ChannelValue) -> Result<Option<u64>> {
    let source: String = value.decode()?;
    Ok(sources.iter().position(|s| *s == source).map(|b| 1 << b))
}
