//! The conversation of the long-conversation test and of `examples/turns.rs`, shared so the
//! README's figures and the test measure the same thing.

/// The user's message of round `turn` (about 100 characters, like a short chat message).
pub fn message(turn: usize) -> String {
    format!(
        "message {turn}: tell me something about the river walk and the tea houses near the lake, please."
    )
}
