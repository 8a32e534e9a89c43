use mnemograph_macros::State;

#[derive(State, Clone, Default)]
struct Log {
    #[reducer(append, add_messages)]
    lines: Vec<String>,
}

fn main() {}
