use mnemograph_macros::State;

#[derive(State, Clone, Default)]
struct Nothing;

fn main() {}
