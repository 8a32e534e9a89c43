use mnemograph_macros::State;

#[derive(State, Clone, Default)]
struct Pair(u8, u8);

fn main() {}
