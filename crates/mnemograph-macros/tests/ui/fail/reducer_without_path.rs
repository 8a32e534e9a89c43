use mnemograph_macros::State;

#[derive(State, Clone, Default)]
struct Log {
    #[reducer]
    lines: Vec<String>,
}

fn main() {}
