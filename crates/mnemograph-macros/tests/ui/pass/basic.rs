//! LastValue fields only: the smallest useful state.

use mnemograph_core::state::{FieldKind, StateWrite};
use mnemograph_core::State as _;
use mnemograph_macros::State;

#[derive(State, Clone, Default, Debug)]
struct Counter {
    count: u64,
    label: String,
}

fn main() {
    let mut state = Counter::default();
    let update: CounterUpdate = CounterUpdate::count(1_u64).with_label("one");
    let written = state.apply(vec![StateWrite::new(update)]).unwrap();
    assert_eq!(written.iter().collect::<Vec<_>>(), [0, 1]);
    assert_eq!((state.count, state.label.as_str()), (1, "one"));
    assert!(Counter::FIELDS.iter().all(|f| f.kind == FieldKind::LastValue));
}
