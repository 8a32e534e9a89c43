use mnemograph_macros::State;

#[derive(State, Clone, Default)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
