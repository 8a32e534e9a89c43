//! How big a crash run is, from the environment, so CI and a developer hunting a bug can size it.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `CRASH_KILLS` | 80 | kills per saver and mode (the run adds threads until it has made this many) |
//! | `CRASH_MAX_KILLS` | 3 × `CRASH_KILLS` | kills past which the run stops adding threads to put a kill in a bucket that has none |
//! | `CRASH_SEED` | from the clock | seeds kill times and node delays; printed in the summary |
//! | `CRASH_NODE_DELAY_US` | 2000 | base of a node's random delay, in microseconds (each [`Pace`](crate::pace::Pace) scales it) |

use std::time::Duration;

use crate::error::{Error, Result};

/// Kills per saver and mode: with the kills [`aim`](crate::aim) places at the run's edges and the
/// threads' two [`Pace`](crate::pace::Pace)s, the rarest bucket of a mode gets about eight of
/// them on a 2-core machine, and six such runs (two savers, three modes) take well under a
/// minute in a debug build.
const DEFAULT_KILLS: usize = 80;

/// The size and randomness of one crash run (one saver, one mode).
#[derive(Debug, Clone)]
pub struct Plan {
    /// Kills to make.
    pub kills: usize,
    /// Kills past which no thread is added for a bucket without kills.
    pub max_kills: usize,
    /// The run's seed; each thread's seed is derived from it.
    pub seed: u64,
    /// The base of a node's delay (each pace scales it, see [`Pace`](crate::pace::Pace)).
    pub node_delay: Duration,
    /// After this many kills a thread's next worker is left to finish, so every thread ends.
    pub max_kills_per_thread: usize,
    /// How long a worker that is not killed may run.
    pub worker_timeout: Duration,
}

impl Plan {
    /// The plan from `CRASH_*` variables (see the module docs).
    ///
    /// # Errors
    /// [`Error::Argument`] for a variable that is set but not a non-negative integer.
    pub fn from_env() -> Result<Self> {
        let seed = match var("CRASH_SEED")? {
            Some(seed) => seed,
            None => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
        };
        let kills = var("CRASH_KILLS")?.map_or(DEFAULT_KILLS, |k| k as usize);
        Ok(Self {
            kills,
            max_kills: var("CRASH_MAX_KILLS")?.map_or(3 * kills, |k| k as usize),
            seed,
            node_delay: Duration::from_micros(var("CRASH_NODE_DELAY_US")?.unwrap_or(2000)),
            max_kills_per_thread: 8,
            worker_timeout: Duration::from_secs(60),
        })
    }

    /// Thread `index`'s seed: the run's seed mixed with the index (SplitMix64's finaliser), so
    /// neighbouring threads get unrelated streams.
    pub fn thread_seed(&self, index: usize) -> u64 {
        let mut z = self.seed.wrapping_add((index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A `u64` environment variable, if set.
fn var(name: &'static str) -> Result<Option<u64>> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| Error::Argument { name, problem: "not a non-negative integer" }),
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_seeds_differ_and_repeat() {
        let plan = Plan {
            kills: 1,
            max_kills: 1,
            seed: 7,
            node_delay: Duration::ZERO,
            max_kills_per_thread: 1,
            worker_timeout: Duration::from_secs(1),
        };
        assert_eq!(plan.thread_seed(3), plan.thread_seed(3));
        let seeds: std::collections::HashSet<u64> = (0..100).map(|i| plan.thread_seed(i)).collect();
        assert_eq!(seeds.len(), 100);
    }
}
