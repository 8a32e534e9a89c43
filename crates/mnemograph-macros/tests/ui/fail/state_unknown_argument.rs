use mnemograph_macros::State;

#[derive(State, Clone, Default)]
#[state(updat = "LogDelta")]
struct Log {
    lines: Vec<String>,
}

fn main() {}
