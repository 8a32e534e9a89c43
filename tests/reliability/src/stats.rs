//! Latency statistics and the one-line reports the tests print.

use std::fmt;
use std::time::Duration;

/// Durations of individual calls.
#[derive(Debug, Default, Clone)]
pub struct Latencies(Vec<Duration>);

impl Latencies {
    /// No samples.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one sample.
    pub fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    /// Adds every sample of `other`.
    pub fn extend(&mut self, other: Latencies) {
        self.0.extend(other.0);
    }

    /// How many samples.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The `p`-th percentile (nearest rank, `p` in 0..=100); zero without samples.
    pub fn percentile(&self, p: f64) -> Duration {
        if self.0.is_empty() {
            return Duration::ZERO;
        }
        let mut sorted = self.0.clone();
        sorted.sort_unstable();
        let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }
}

/// What a load run measured on one saver.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// The saver.
    pub saver: &'static str,
    /// Threads run at once.
    pub threads: usize,
    /// Turns per thread.
    pub turns: usize,
    /// Wall time of the whole run.
    pub wall: Duration,
    /// Per-turn latencies.
    pub latencies: Latencies,
}

impl fmt::Display for LoadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total = self.latencies.len();
        let rate = total as f64 / self.wall.as_secs_f64().max(f64::MIN_POSITIVE);
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "RESULT load saver={} threads={} turns={} total_turns={} wall={:.2}s throughput={:.0} turns/s \
             p50={:.2}ms p99={:.2}ms max={:.2}ms",
            self.saver,
            self.threads,
            self.turns,
            total,
            self.wall.as_secs_f64(),
            rate,
            ms(self.latencies.percentile(50.0)),
            ms(self.latencies.percentile(99.0)),
            ms(self.latencies.percentile(100.0)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let mut l = Latencies::new();
        for ms in 1..=100 {
            l.push(Duration::from_millis(ms));
        }
        assert_eq!(l.percentile(50.0), Duration::from_millis(50));
        assert_eq!(l.percentile(99.0), Duration::from_millis(99));
        assert_eq!(l.percentile(100.0), Duration::from_millis(100));
        assert_eq!(l.percentile(0.0), Duration::from_millis(1));
        assert_eq!(Latencies::new().percentile(50.0), Duration::ZERO);
    }
}
