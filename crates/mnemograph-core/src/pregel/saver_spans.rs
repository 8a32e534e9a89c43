//! The spans of the engine's calls to its saver (`checkpoint.get_tuple`, `checkpoint.commit`,
//! `checkpoint.put_writes`, `checkpoint.list`, at `debug`). The saver, which alone knows its
//! backend, fills in `db.system`, the bytes it sent and the round trips it made with
//! [`record_io`](crate::checkpoint::backend::record_io). A call the remembered-checkpoint layer
//! answers without the backend has a span with none of them.

use tracing::field::Empty;
use tracing::Span;

use crate::checkpoint::CheckpointConfig;

/// A saver operation the engine makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SaverOp {
    /// Reading a checkpoint.
    GetTuple,
    /// Storing checkpoints.
    Commit,
    /// Storing a task's writes.
    PutWrites,
    /// Listing a thread's history.
    List,
}

/// A `debug` span for `op` on the thread of `config`, with the fields a saver records.
pub(crate) fn saver_span(op: SaverOp, config: &CheckpointConfig) -> Span {
    let thread = config.thread_id.as_str();
    let ns = config.checkpoint_ns.as_str();
    // One macro call per name: a span's name is part of its static metadata.
    macro_rules! span {
        ($name:literal) => {
            tracing::debug_span!(
                $name,
                thread_id = thread,
                checkpoint_ns = ns,
                db.system = Empty,
                bytes = Empty,
                round_trips = Empty,
            )
        };
    }
    match op {
        SaverOp::GetTuple => span!("checkpoint.get_tuple"),
        SaverOp::Commit => span!("checkpoint.commit"),
        SaverOp::PutWrites => span!("checkpoint.put_writes"),
        SaverOp::List => span!("checkpoint.list"),
    }
}
