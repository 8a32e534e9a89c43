//! The spans of saver operations. The engine opens one around each call it makes to its saver
//! (`checkpoint.get_tuple`, `checkpoint.commit`, `checkpoint.put_writes`, `checkpoint.list`, at
//! `debug`); the saver, which alone knows its backend, fills in `db.system`, the bytes it sent and
//! the round trips it made with [`record_io`]. A call the remembered-checkpoint layer answers
//! without the backend has a span with none of them.

use tracing::field::Empty;
use tracing::Span;

use super::CheckpointConfig;

/// A saver operation the engine makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaverOp {
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
pub fn saver_span(op: SaverOp, config: &CheckpointConfig) -> Span {
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

/// Records on the current saver span what one operation cost the backend: `system` (`mysql`,
/// `redis`, as OpenTelemetry's `db.system` names them), the bytes sent and the round trips made.
/// A saver calls it from inside the operation; outside a saver span it records nothing.
pub fn record_io(system: &'static str, bytes: usize, round_trips: usize) {
    let span = Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("db.system", system);
    span.record("bytes", bytes);
    span.record("round_trips", round_trips);
}
