//! What `#[derive(State)]`'s generated code calls, and nothing else should: public so that the
//! generated code in the user's crate can reach it, hidden from the docs, and free to change
//! between releases.

use std::fmt;

use crate::state::InvalidUpdate;

/// Collects the non-`None` writes of one field and checks LastValue's one-write rule.
///
/// Used by the derive: `values` are the field's writes in task-path order.
///
/// # Errors
/// [`InvalidUpdate::ConcurrentWrites`] when there is more than one.
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
}
