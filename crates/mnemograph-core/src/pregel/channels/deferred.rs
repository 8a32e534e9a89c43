//! `branch:to:<node>` of a deferred node (LangGraph's `defer=True`): written like an edge, but
//! available only once the graph would otherwise finish, then consumed by the node it triggers.

use serde_json::{json, Value as Json};

use super::Channels;
use crate::error::Result;
use crate::value::ChannelValue;
use crate::State;

/// Available once written and the graph reached its finish point since.
pub(super) fn available<S: State>(ch: &Channels<S>, i: usize) -> bool {
    ch.present[i] && ch.finished[i]
}

/// Its checkpoint value as Python's `(value, finished)` pair.
pub(super) fn value<S: State>(ch: &Channels<S>, i: usize) -> Option<ChannelValue> {
    ch.present[i].then(|| ChannelValue::Json(json!([null, ch.finished[i]]).into()))
}

/// Restores the pair.
pub(super) fn restore<S: State>(ch: &mut Channels<S>, i: usize, value: &ChannelValue) -> Result<()> {
    ch.present[i] = true;
    ch.finished[i] = value.to_json()?.get(1).and_then(Json::as_bool).unwrap_or(false);
    Ok(())
}

/// The node it triggered ran: the edge is used up.
pub(super) fn consume<S: State>(ch: &mut Channels<S>, i: usize, next: u64) {
    if ch.finished[i] {
        ch.present[i] = false;
        ch.finished[i] = false;
        ch.versions[i] = next;
    }
}

/// Nothing else can trigger: a waiting edge becomes available. Returns whether it did.
pub(super) fn finish<S: State>(ch: &mut Channels<S>, i: usize, next: u64) -> bool {
    if ch.present[i] && !ch.finished[i] {
        ch.finished[i] = true;
        ch.versions[i] = next;
        return true;
    }
    false
}
