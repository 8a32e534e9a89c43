// Every malformed attribute is reported, not just the first.
use mnemograph_macros::State;

#[derive(State, Clone, Default)]
struct Log {
    #[reducer = "append"]
    lines: Vec<String>,
    #[reducer(append)]
    #[reducer(append)]
    twice: Vec<String>,
    #[state(update = "X")]
    misplaced: u8,
    count: u8,
    with_count: u8,
}

fn main() {}
