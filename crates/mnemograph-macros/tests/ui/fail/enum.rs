use mnemograph_macros::State;

#[derive(State, Clone)]
enum Mode {
    Fast,
    Slow,
}

fn main() {}
