//! [`RunOptions`]: the run-level options of a run request beyond its input — when it starts
//! (`after_seconds`), how often it checkpoints (`durability`, `checkpoint_during`) and what
//! becomes of a stateless run's thread (`on_completion`) — and the readers of each option, which
//! refuse a malformed one with a 422 naming it, as LangGraph's server refuses it.

use std::time::Duration;

use mnemograph_core::Durability;
use serde_json::Value;

use crate::error::ServerError;

/// The longest `after_seconds` taken: a year. A later start is refused rather than kept pending
/// for longer than any deployment runs.
const MAX_DELAY: Duration = Duration::from_secs(366 * 24 * 3600);

/// A run request's options, read and checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunOptions {
    /// How long the run stays pending before it may start.
    pub delay: Duration,
    /// Whether a stateless run's thread is deleted when the run ends (`on_completion = "delete"`).
    pub delete_on_completion: bool,
}

/// When a run's checkpoints are written: its `durability`, else what its `checkpoint_during` means
/// to LangGraph (during the run, or only at its end); `None` when it says neither.
pub(crate) fn durability_of(
    durability_name: Option<&str>,
    checkpoint_during: Option<&Value>,
) -> Result<Option<Durability>, ServerError> {
    let checkpoint_during = flag_or_none(checkpoint_during, "checkpoint_during")?;
    match durability_name {
        Some(name) => durability(name).map(Some),
        None => Ok(checkpoint_during.map(|on| if on { Durability::Async } else { Durability::Exit })),
    }
}

/// `on_completion`: whether a stateless run's thread is deleted when the run ends.
pub(crate) fn delete_on_completion(on_completion: Option<&str>) -> Result<bool, ServerError> {
    match on_completion {
        None | Some("delete") => Ok(true),
        Some("keep") => Ok(false),
        Some(other) => Err(ServerError::Unprocessable(format!(
            "Invalid on_completion: '{other}'. Must be one of 'delete' or 'keep'"
        ))),
    }
}

/// A durability's LangGraph name; `None` for one LangGraph does not have.
pub(crate) fn durability_name(durability: Durability) -> Option<&'static str> {
    match durability {
        Durability::Sync => Some("sync"),
        Durability::Async => Some("async"),
        Durability::Exit => Some("exit"),
        _ => None,
    }
}

/// A durability by its LangGraph name.
fn durability(name: &str) -> Result<Durability, ServerError> {
    match name {
        "sync" => Ok(Durability::Sync),
        "async" => Ok(Durability::Async),
        "exit" => Ok(Durability::Exit),
        other => Err(ServerError::Unprocessable(format!(
            "Invalid durability: '{other}'. Must be one of 'sync', 'async' or 'exit'"
        ))),
    }
}

/// `after_seconds`: a non-negative number of seconds, at most [`MAX_DELAY`].
pub(crate) fn delay(value: Option<&Value>) -> Result<Duration, ServerError> {
    let seconds = match value {
        None | Some(Value::Null) => return Ok(Duration::ZERO),
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(other) => {
            return Err(ServerError::Unprocessable(format!(
                "`after_seconds` must be a number of seconds, got {other}"
            )))
        }
    };
    Duration::try_from_secs_f64(seconds).ok().filter(|d| *d <= MAX_DELAY).ok_or_else(|| {
        ServerError::Unprocessable(format!(
            "`after_seconds` must be between 0 and {} seconds, got {seconds}",
            MAX_DELAY.as_secs()
        ))
    })
}

/// A boolean option; absent or `null` is `false`.
pub(crate) fn flag(value: Option<&Value>, name: &str) -> Result<bool, ServerError> {
    Ok(flag_or_none(value, name)?.unwrap_or(false))
}

/// A boolean option; `None` when absent or `null`.
fn flag_or_none(value: Option<&Value>, name: &str) -> Result<Option<bool>, ServerError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => {
            Err(ServerError::Unprocessable(format!("`{name}` must be true or false, got {other}")))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn after_seconds_takes_non_negative_numbers_only() {
        assert_eq!(delay(None).unwrap(), Duration::ZERO);
        assert_eq!(delay(Some(&json!(2))).unwrap(), Duration::from_secs(2));
        assert_eq!(delay(Some(&json!(0.5))).unwrap(), Duration::from_millis(500));
        for bad in [json!(-1), json!("5"), json!(1e12), json!(true)] {
            assert!(matches!(delay(Some(&bad)), Err(ServerError::Unprocessable(_))), "{bad}");
        }
    }

    #[test]
    fn flags_take_booleans_or_null() {
        assert_eq!(flag_or_none(Some(&json!(null)), "f").unwrap(), None);
        assert!(flag(Some(&json!(true)), "f").unwrap());
        assert!(
            matches!(flag(Some(&json!("yes")), "f"), Err(ServerError::Unprocessable(m)) if m.contains("`f`"))
        );
    }

    #[test]
    fn durability_names_are_langgraphs() {
        assert_eq!(durability("exit").unwrap(), Durability::Exit);
        for d in [Durability::Sync, Durability::Async, Durability::Exit] {
            assert_eq!(durability(durability_name(d).unwrap()).unwrap(), d);
        }
        assert!(matches!(durability("eventually"), Err(ServerError::Unprocessable(_))));
    }
}
