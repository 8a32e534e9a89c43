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

/// A static breakpoint the run stopped at (`interrupt_before` / `interrupt_after`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Breakpoint {
    /// Stopped before these nodes ran; resuming runs them.
    Before(Vec<String>),
    /// Stopped after these nodes ran; resuming continues with their successors.
    After(Vec<String>),
}

/// The result of a run: the final state, plus the interrupt or breakpoint it stopped at (none when
/// the run completed). Derefs to the state.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunOutcome<S> {
    /// The state when the run returned.
    pub state: S,
    /// Interrupts that stopped the run; empty when it ran to completion.
    pub interrupts: Vec<Interrupt>,
    /// The static breakpoint that stopped the run, if any.
    pub breakpoint: Option<Breakpoint>,
}

impl<S> RunOutcome<S> {
    pub(crate) fn done(state: S) -> Self {
        Self { state, interrupts: Vec::new(), breakpoint: None }
    }
    /// Whether the run stopped early, at an interrupt or a breakpoint.
    pub fn is_interrupted(&self) -> bool {
        !self.interrupts.is_empty() || self.breakpoint.is_some()
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
