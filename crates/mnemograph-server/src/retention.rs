//! [`Retention`]: how long the server keeps what clients may still ask for, and how much of it.
//! The sweeper drops what outlived it; reads already answer as if it were gone.

use std::time::Duration;

/// How long a finished run's record stays, by default.
pub const RUN_RETENTION: Duration = Duration::from_secs(60 * 60);

/// How many bytes of droppable events a run keeps for late readers, by default.
pub const EVENT_LOG_BYTES: usize = 1 << 20;

/// How often the sweeper runs, by default.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(60);

/// What a server keeps, and for how long, beyond a run's event retention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// How long a finished run's record and events stay.
    pub runs: Duration,
    /// The bytes of droppable events a run keeps (see `EventLog`).
    pub(crate) event_log_bytes: usize,
    /// How long a thread nobody updates stays; forever when `None`.
    pub thread_ttl: Option<Duration>,
    /// The TTL of items put through `/store` without one; forever when `None`.
    pub(crate) store_ttl: Option<Duration>,
    /// How often the sweeper frees what expired.
    pub(crate) sweep_interval: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            runs: RUN_RETENTION,
            event_log_bytes: EVENT_LOG_BYTES,
            thread_ttl: None,
            store_ttl: None,
            sweep_interval: SWEEP_INTERVAL,
        }
    }
}
