//! How fast a thread's nodes and saves are, relative to each other.
//!
//! Under `async` durability a kill finds one of two states: the save of the newest checkpoint has
//! landed before the next step's tasks finished (nodes slower than saves, as in a graph that calls
//! a model), or it was still in flight (saves slower than nodes, as on a loaded saver). Each is a
//! coverage bucket, and which one a kill finds depends on that ratio more than on the kill's
//! time, so threads alternate between two paces. Each pace has its own uninterrupted run to time
//! its kill window.

use std::time::Duration;

/// A thread's pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// Nodes sleep up to [`SLOW`] times the base node delay; saves are sent at once.
    SlowNodes,
    /// Nodes sleep up to half the base node delay; each checkpoint save waits up to twice
    /// [`SLOW`] times the base first ([`SlowSaves`](crate::slow_saves::SlowSaves)): its
    /// window (a save in flight while the next step's tasks finish) is what `async` may lose,
    /// and the longer it is, the more kills land in it.
    SlowSaves,
}

/// How much slower the slow side of a pace is than the base node delay.
pub const SLOW: u32 = 4;

impl Pace {
    /// Every pace, in the order threads take them.
    pub const ALL: [Self; 2] = [Self::SlowNodes, Self::SlowSaves];

    /// Thread `index`'s pace: they alternate.
    pub fn of_thread(index: usize) -> Self {
        Self::ALL[index % Self::ALL.len()]
    }

    /// The position in [`ALL`](Self::ALL).
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|p| *p == self).unwrap_or_default()
    }

    /// The upper bound of a node's delay, from the plan's `base`.
    pub fn node_delay(self, base: Duration) -> Duration {
        match self {
            Self::SlowNodes => base * SLOW,
            Self::SlowSaves => base / 2,
        }
    }

    /// The upper bound of a checkpoint save's delay, from the plan's `base` node delay.
    pub fn save_delay(self, base: Duration) -> Duration {
        match self {
            Self::SlowNodes => Duration::ZERO,
            Self::SlowSaves => base * SLOW * 2,
        }
    }

    /// `slow nodes` or `slow saves`.
    pub fn name(self) -> &'static str {
        match self {
            Self::SlowNodes => "slow nodes",
            Self::SlowSaves => "slow saves",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_alternate_and_each_pace_slows_one_side() {
        assert_eq!(
            [0, 1, 2, 3].map(Pace::of_thread),
            [Pace::SlowNodes, Pace::SlowSaves, Pace::SlowNodes, Pace::SlowSaves]
        );
        let base = Duration::from_millis(2);
        for pace in Pace::ALL {
            assert_eq!(Pace::ALL[pace.index()], pace);
            assert!(pace.node_delay(base).max(pace.save_delay(base)) >= base * SLOW);
            assert!(pace.node_delay(base).min(pace.save_delay(base)) < base);
        }
    }
}
