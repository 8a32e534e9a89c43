//! Chat messages and the [`add_messages`] reducer, compatible with LangChain and
//! LangGraph, plus [`MessagesState`], a ready-made graph state holding a message list.
//!
//! The message types live in [`mnemograph_checkpoint::messages`], which savers and memory
//! backends use without the engine; this module re-exports them next to the state, which
//! needs the engine's [`State`](crate::State) trait.
//!
//! ```
//! use mnemograph_core::messages::{add_messages, Message, MessagesState};
//!
//! let mut state = MessagesState::default();
//! add_messages(&mut state.messages, vec![Message::human("hi")])?;
//! assert_eq!(state.messages.len(), 1);
//! # Ok::<(), mnemograph_core::messages::MessagesError>(())
//! ```

mod state;

pub use mnemograph_checkpoint::messages::*;
pub use state::{MessagesState, MessagesStateUpdate};
