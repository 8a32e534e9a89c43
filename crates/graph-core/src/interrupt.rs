//! Interrupts: a run that stops to wait for a human is an outcome, not an error.

use std::ops::{Deref, DerefMut};

/// A pending interrupt (LangGraph's `Interrupt(value, id)`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interrupt {
    /// What the node asked for.
    pub value: serde_json::Value,
    /// Stable id, used to resume this interrupt specifically.
    pub id: String,
}

/// The result of a run: the final state, plus the interrupts it stopped at (empty when the run
/// completed). Derefs to the state.
#[derive(Debug, Clone)]
pub struct RunOutcome<S> {
    /// The state when the run returned.
    pub state: S,
    /// Interrupts that stopped the run; empty when it ran to completion.
    pub interrupts: Vec<Interrupt>,
}

impl<S> RunOutcome<S> {
    /// Whether the run stopped at an interrupt.
    pub fn is_interrupted(&self) -> bool {
        !self.interrupts.is_empty()
    }
    /// The state, dropping the interrupts.
    pub fn into_state(self) -> S {
        self.state
    }
}

impl<S> Deref for RunOutcome<S> {
    type Target = S;
    fn deref(&self) -> &S {
        &self.state
    }
}

impl<S> DerefMut for RunOutcome<S> {
    fn deref_mut(&mut self) -> &mut S {
        &mut self.state
    }
}
