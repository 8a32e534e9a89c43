//! `#[state(update = "...")]` names the update type.

use mnemograph_core::State as _;
use mnemograph_macros::State;

#[derive(State, Clone, Default)]
#[state(update = "Delta")]
struct Doc {
    #[reducer(append)]
    lines: Vec<String>,
}

fn main() {
    let delta: Delta = Delta::lines(vec!["x".to_owned()]);
    let same: <Doc as mnemograph_core::State>::Update = delta.clone();
    assert_eq!(Doc::update_values(&same).len(), 1);
}
