//! The parts a [`State`](crate::State) is described with: its fields, which fields an update
//! writes, the writes of a superstep, and what a rejected superstep reports.

use std::fmt;

/// How a field (channel) combines the writes of one superstep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldKind {
    /// LangGraph's `LastValue`: at most one write per superstep, which replaces the value.
    LastValue,
    /// LangGraph's `BinaryOperatorAggregate`: writes are folded into the value with a reducer, in
    /// task-path order.
    Reducer,
}

/// Static description of one field of a [`State`](crate::State).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The channel name: the field's name.
    pub name: &'static str,
    /// How writes are combined.
    pub kind: FieldKind,
}

impl Field {
    /// A LastValue field.
    pub const fn last_value(name: &'static str) -> Self {
        Self { name, kind: FieldKind::LastValue }
    }
    /// A reducer field.
    pub const fn reducer(name: &'static str) -> Self {
        Self { name, kind: FieldKind::Reducer }
    }
}

/// A set of field indexes (a state has at most 64 fields).
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct FieldSet(u64);

impl FieldSet {
    /// The empty set.
    pub const EMPTY: Self = Self(0);

    /// Adds field `index`.
    pub fn insert(&mut self, index: usize) {
        debug_assert!(index < 64, "a State has at most 64 fields");
        self.0 |= 1 << index;
    }
    /// Whether field `index` is in the set.
    pub const fn contains(self, index: usize) -> bool {
        index < 64 && self.0 & (1 << index) != 0
    }
    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The union of two sets.
    #[must_use]
    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
    /// The indexes in the set, ascending.
    pub fn iter(self) -> impl Iterator<Item = usize> {
        (0..64).filter(move |i| self.contains(*i))
    }
}

impl fmt::Debug for FieldSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// One write to the state: an update, and whether its reducer fields are overwritten rather than
/// reduced (LangGraph's `Overwrite`).
#[derive(Debug, Clone)]
pub struct StateWrite<U> {
    /// The update; `Some` fields are written.
    pub update: U,
    /// Replace reducer fields instead of folding the update into them.
    pub overwrite: bool,
}

impl<U> StateWrite<U> {
    /// A normal write.
    pub const fn new(update: U) -> Self {
        Self { update, overwrite: false }
    }
}

/// A rejected superstep update (LangGraph's `InvalidUpdateError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidUpdate {
    /// A LastValue field received more than one write in one superstep.
    #[error(
        "at key `{field}`: can receive only one value per step; give the field a reducer to accept several"
    )]
    ConcurrentWrites {
        /// The field.
        field: &'static str,
    },
    /// A reducer field received more than one `Overwrite` in one superstep.
    #[error("at key `{field}`: can receive only one Overwrite value per superstep")]
    ConcurrentOverwrites {
        /// The field.
        field: &'static str,
    },
    /// The reducer rejected a write.
    #[error("at key `{field}`: {reason}")]
    Reducer {
        /// The field.
        field: &'static str,
        /// What the reducer reported.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_set_iterates_in_order() {
        let mut s = FieldSet::EMPTY;
        s.insert(5);
        s.insert(1);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![1, 5]);
        assert!(s.contains(5) && !s.contains(2));
    }
}
