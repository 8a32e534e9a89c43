//! What a read cost the server, for the engine's saver span: the bytes of the rows received (the
//! text and blob columns as they arrived) and the statements sent.

use mnemograph_checkpoint::checkpoint::backend::record_io;

/// A running tally of one read's I/O.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadIo {
    /// Bytes of the rows received.
    pub(crate) bytes: usize,
    /// Statements sent, each one round trip.
    pub(crate) round_trips: usize,
}

impl ReadIo {
    /// One more statement sent.
    pub(crate) fn statement(&mut self) {
        self.round_trips += 1;
    }

    /// `bytes` more received.
    pub(crate) fn received(&mut self, bytes: usize) {
        self.bytes += bytes;
    }

    /// Adds another tally to this one.
    pub(crate) fn add(&mut self, other: Self) {
        self.bytes += other.bytes;
        self.round_trips += other.round_trips;
    }

    /// Records the tally on the current saver span.
    pub(crate) fn record(self) {
        record_io("mysql", self.bytes, self.round_trips);
    }
}
