//! The update type, its fields and builders take the state's visibility: here `pub(crate)`, so
//! they are usable outside the defining module.

mod state {
    use mnemograph_macros::State;

    #[derive(State, Clone, Default)]
    pub(crate) struct Shared {
        #[reducer(append)]
        pub(crate) items: Vec<u32>,
        pub(crate) owner: String,
    }
}

use mnemograph_core::state::StateWrite;
use mnemograph_core::State as _;
use state::{Shared, SharedUpdate};

fn main() {
    let update = SharedUpdate { items: Some(vec![1]), owner: None }.with_owner("me");
    let mut shared = Shared::default();
    shared.apply(vec![StateWrite::new(update), StateWrite::new(SharedUpdate::items(vec![2]))]).unwrap();
    assert_eq!((shared.items, shared.owner.as_str()), (vec![1, 2], "me"));
}
