//! A small state and nodes of every output kind.

use mnemograph_core::prelude::*;

#[derive(State, Clone, Default, Debug)]
pub(crate) struct S {
    pub(crate) count: i64,
}

/// Returns a plain update.
pub(crate) async fn update(s: S) -> Result<SUpdate> {
    Ok(SUpdate::count(s.count + 1))
}

/// Returns an optional update.
pub(crate) async fn maybe(_s: S) -> Result<Option<SUpdate>> {
    Ok(None)
}

/// Returns nothing.
pub(crate) async fn unit(_s: S) -> Result<()> {
    Ok(())
}

/// Returns a `Command` without a destination (one could be added at run time).
pub(crate) async fn command(_s: S) -> Result<Command<S>> {
    Ok(Command::new())
}

/// Returns no pushes (some could be returned at run time).
pub(crate) async fn pushes(_s: S) -> Result<Vec<Push<S>>> {
    Ok(Vec::new())
}
