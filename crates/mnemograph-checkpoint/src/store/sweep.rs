//! When a store with expiry reclaims its expired items.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// When a store's writes sweep expired items: at most once per interval
/// ([`TtlConfig::sweep_interval`](super::TtlConfig::sweep_interval)), so that a busy store does
/// not pay a sweep on every write. Reads hide expired items whether or not a sweep ran. Clones
/// share the time of the last sweep.
///
/// ```
/// use std::time::Duration;
/// use mnemograph_checkpoint::store::SweepSchedule;
///
/// let schedule = SweepSchedule::default();
/// assert!(schedule.due(Duration::from_secs(60)), "the first write sweeps");
/// assert!(!schedule.clone().due(Duration::from_secs(60)), "the next one within the minute does not");
/// ```
#[derive(Debug, Clone, Default)]
pub struct SweepSchedule {
    /// When the last sweep was due.
    last: Arc<Mutex<Option<Instant>>>,
}

impl SweepSchedule {
    /// Whether a sweep is due, `interval` or more after the last one; marks it done when it is.
    pub fn due(&self, interval: Duration) -> bool {
        let now = Instant::now();
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if last.is_some_and(|t| now.duration_since(t) < interval) {
            return false;
        }
        *last = Some(now);
        true
    }
}
