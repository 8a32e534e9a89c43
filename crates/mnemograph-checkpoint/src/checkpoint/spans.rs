//! What a saver records on the span the engine opens around each call it makes to it
//! (`checkpoint.get_tuple`, `checkpoint.commit`, `checkpoint.put_writes`, `checkpoint.list`, at
//! `debug`, with empty `db.system`, `bytes` and `round_trips` fields): the saver alone knows its
//! backend, so it fills them in with [`record_io`]. A call the remembered-checkpoint layer
//! answers without the backend leaves them empty.

use tracing::Span;

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
