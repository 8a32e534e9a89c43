//! The three reducer forms: mnemograph-core's `add_messages` and `append` by bare name, and any path to
//! a function of the user's, returning `()` or a `Result` with a `Display` error.

use mnemograph_core::messages::Message;
use mnemograph_core::state::{FieldKind, StateWrite};
use mnemograph_core::State as _;
use mnemograph_macros::State;

fn sum(total: &mut i64, n: i64) {
    *total += n;
}

mod merge {
    pub fn longest(slot: &mut String, value: String) -> Result<(), std::fmt::Error> {
        if value.len() > slot.len() {
            *slot = value;
        }
        Ok(())
    }
}

// Named like locals of the generated `apply`; the derive must still call these.
fn written(slot: &mut u8, value: u8) {
    *slot = value;
}
fn item(slot: &mut u16, value: u16) {
    *slot += value;
}

#[derive(State, Clone, Default)]
struct Agent {
    #[reducer(add_messages)]
    messages: Vec<Message>,
    #[reducer(append)]
    log: Vec<String>,
    #[reducer(sum)]
    total: i64,
    #[reducer(crate::merge::longest)]
    longest: String,
    #[reducer(merge::longest)]
    also_longest: String,
    #[reducer(written)]
    a: u8,
    #[reducer(self::item)]
    b: u16,
}

fn main() {
    assert!(Agent::FIELDS.iter().all(|f| f.kind == FieldKind::Reducer));
    let mut state = Agent::default();
    let writes = vec![
        StateWrite::new(AgentUpdate::total(2).with_log(vec!["a".to_owned()]).with_b(1_u16)),
        StateWrite::new(AgentUpdate::total(3).with_longest("xy").with_a(7_u8).with_b(2_u16)),
        StateWrite::new(AgentUpdate::messages(vec![Message::human("hi")])),
    ];
    state.apply(writes).unwrap();
    assert_eq!((state.total, state.a, state.b), (5, 7, 3));
    assert_eq!((state.log.len(), state.messages.len(), state.longest.as_str()), (1, 1, "xy"));
}
