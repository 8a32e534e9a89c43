//! `branch:to:<node>`: an edge's trigger (LangGraph's `EphemeralValue`), set by a write and cleared
//! at the end of the next step nobody writes it.

use super::Channels;
use crate::value::ChannelValue;
use crate::State;

/// An edge triggers while it holds its mark.
pub(super) fn available<S: State>(ch: &Channels<S>, i: usize) -> bool {
    ch.present[i]
}

/// Its checkpoint value: `None` (Python's) while set, nothing otherwise.
pub(super) fn value<S: State>(ch: &Channels<S>, i: usize) -> Option<ChannelValue> {
    ch.present[i].then_some(ChannelValue::Null)
}

/// Marks the edge written (also for deferred edges, which are written the same way).
pub(super) fn write<S: State>(ch: &mut Channels<S>, i: usize) {
    ch.present[i] = true;
    ch.finished[i] = false;
}

/// Ends a step: a mark nobody renewed this step is cleared, its version moving on.
pub(super) fn finish_step<S: State>(ch: &mut Channels<S>, i: usize, updated: bool, next: u64) {
    if ch.present[i] && !updated {
        ch.present[i] = false;
        ch.versions[i] = next;
    }
}
