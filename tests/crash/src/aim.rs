//! Where in a worker's run each kill is aimed.
//!
//! Most kills are drawn uniformly over the time an uninterrupted run takes (the window), which
//! puts them where the run spends its time: inside node bodies and saves. Two moments are too
//! short for that draw to hit reliably, and every mode has a coverage bucket there, so some kills
//! aim at them: the run's start (before the first save, or the first node, ends) and the moment
//! right after the run returned, with every checkpoint of it stored.

use std::time::Duration;

use rand::{Rng, RngExt};

/// Kills aimed at the run's start: one in this many.
const EARLY_ONE_IN: u32 = 4;
/// The start of the run, as a fraction of the window: one part in this many.
const EARLY_PART: u32 = 60;
/// Kills made as soon as the worker says its run returned: one in this many.
const AT_DONE_ONE_IN: u32 = 8;

/// When to kill a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kill {
    /// This long after its ready line, unless it said `done` first.
    After(Duration),
    /// As soon as it says `done`.
    AtDone,
}

impl Kill {
    /// A kill for a run whose uninterrupted length is `window`.
    pub fn draw(rng: &mut impl Rng, window: Duration) -> Self {
        if rng.random_ratio(1, AT_DONE_ONE_IN) {
            return Self::AtDone;
        }
        let micros = window.as_micros().max(u128::from(EARLY_PART)) as u64;
        let upper = if rng.random_ratio(1, EARLY_ONE_IN) { micros / u64::from(EARLY_PART) } else { micros };
        Self::After(Duration::from_micros(rng.random_range(0..upper)))
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn kills_stay_in_the_window_and_some_aim_at_its_edges() {
        let mut rng = StdRng::seed_from_u64(1);
        let window = Duration::from_millis(200);
        let kills: Vec<Kill> = (0..1000).map(|_| Kill::draw(&mut rng, window)).collect();
        let early = window / EARLY_PART;
        assert!(kills.iter().all(|k| matches!(k, Kill::After(d) if *d < window) || *k == Kill::AtDone));
        assert!(kills.iter().filter(|k| **k == Kill::AtDone).count() > 1000 / AT_DONE_ONE_IN as usize / 2);
        let at_start = kills.iter().filter(|k| matches!(k, Kill::After(d) if *d < early)).count();
        assert!(at_start > 1000 / EARLY_ONE_IN as usize / 2, "{at_start}");
    }
}
