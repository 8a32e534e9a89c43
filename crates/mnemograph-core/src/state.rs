//! What a [`State`](crate::State) is made of: its fields, which fields an update writes, the
//! writes of a superstep, and the reducers.
//!
//! The helpers only the derive's generated code calls (`last_value`, `reduce`, `ReducerOutput`) are
//! public for that code and hidden from these docs. A reducer function takes `(&mut T, T)` and
//! returns `()` or `Result<(), E: Display>`.

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

/// Collects the non-`None` writes of one field and checks LastValue's one-write rule.
///
/// Used by the derive: `values` are the field's writes in task-path order.
///
/// # Errors
/// [`InvalidUpdate::ConcurrentWrites`] when there is more than one.
#[doc(hidden)]
pub fn last_value<T>(field: &'static str, slot: &mut T, values: Vec<T>) -> Result<bool, InvalidUpdate> {
    let mut values = values.into_iter();
    match (values.next(), values.next()) {
        (None, _) => Ok(false),
        (Some(v), None) => {
            *slot = v;
            Ok(true)
        }
        (Some(_), Some(_)) => Err(InvalidUpdate::ConcurrentWrites { field }),
    }
}

/// Folds one field's writes with its reducer, honouring overwrites as LangGraph does.
///
/// `values` are `(value, is_overwrite)` in task-path order. Used by the derive.
///
/// # Errors
/// [`InvalidUpdate`] when two overwrites arrive or the reducer fails.
#[doc(hidden)]
pub fn reduce<T, R>(
    field: &'static str,
    slot: &mut T,
    values: Vec<(T, bool)>,
    mut reducer: R,
) -> Result<bool, InvalidUpdate>
where
    R: FnMut(&mut T, T) -> Result<(), String>,
{
    if values.is_empty() {
        return Ok(false);
    }
    let mut seen_overwrite = false;
    for (value, overwrite) in values {
        if overwrite {
            if seen_overwrite {
                return Err(InvalidUpdate::ConcurrentOverwrites { field });
            }
            *slot = value;
            seen_overwrite = true;
        } else if !seen_overwrite {
            reducer(slot, value).map_err(|reason| InvalidUpdate::Reducer { field, reason })?;
        }
    }
    Ok(true)
}

/// What a reducer function may return: nothing, or a `Result` whose error is reported as
/// [`InvalidUpdate::Reducer`].
#[doc(hidden)]
pub trait ReducerOutput {
    /// Converts to the engine's form.
    fn into_reducer_result(self) -> Result<(), String>;
}

impl ReducerOutput for () {
    fn into_reducer_result(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: fmt::Display> ReducerOutput for Result<(), E> {
    fn into_reducer_result(self) -> Result<(), String> {
        self.map_err(|e| e.to_string())
    }
}

/// The `append` reducer: extends a list with the written items.
pub fn append<T>(left: &mut Vec<T>, right: Vec<T>) {
    left.extend(right);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_value_accepts_one_write_and_rejects_two() {
        let mut slot = 0;
        assert_eq!(last_value("x", &mut slot, vec![]), Ok(false));
        assert_eq!(last_value("x", &mut slot, vec![3]), Ok(true));
        assert_eq!(slot, 3);
        assert_eq!(
            last_value("x", &mut slot, vec![1, 2]),
            Err(InvalidUpdate::ConcurrentWrites { field: "x" })
        );
    }

    #[test]
    fn overwrite_replaces_and_suppresses_later_writes() {
        let mut slot = vec![1];
        let add = |l: &mut Vec<i32>, r: Vec<i32>| {
            l.extend(r);
            Ok(())
        };
        let writes = vec![(vec![2], false), (vec![9], true), (vec![3], false)];
        assert_eq!(reduce("x", &mut slot, writes, add), Ok(true));
        assert_eq!(slot, vec![9]);
        let writes = vec![(vec![9], true), (vec![8], true)];
        assert_eq!(
            reduce("x", &mut slot, writes, add),
            Err(InvalidUpdate::ConcurrentOverwrites { field: "x" })
        );
    }

    #[test]
    fn field_set_iterates_in_order() {
        let mut s = FieldSet::EMPTY;
        s.insert(5);
        s.insert(1);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![1, 5]);
        assert!(s.contains(5) && !s.contains(2));
    }
}
