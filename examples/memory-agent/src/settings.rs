//! How the agent handles its memories, read from `MEMORY_*` variables: the token budget of each
//! model request and the compaction schedule. [`Config`](crate::Config) picks the backends; these
//! tune the agent on top of any of them.

use crate::compact::CompactPolicy;
use crate::error::{Error, Result};
use crate::trim::DEFAULT_MAX_CONTEXT_TOKENS;

/// Tuning of the agent's memory handling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// `MEMORY_MAX_CONTEXT_TOKENS` (default [`DEFAULT_MAX_CONTEXT_TOKENS`]): token budget of each
    /// model request, system prompt with memories plus the conversation trimmed to fit.
    pub max_context_tokens: usize,
    /// `MEMORY_COMPACT_AFTER_DAYS`: when set, the interactive mode compacts the current user's
    /// sessions idle for this many days, at start and whenever the session or user changes.
    /// Unset: only on `/compact` or the `compact` command.
    pub compact_after_days: Option<u32>,
}

impl Default for Settings {
    fn default() -> Self {
        Self { max_context_tokens: DEFAULT_MAX_CONTEXT_TOKENS, compact_after_days: None }
    }
}

impl Settings {
    /// Reads the process environment; see [`from_lookup`](Self::from_lookup).
    ///
    /// # Errors
    /// As [`from_lookup`](Self::from_lookup).
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads settings through `var` (empty values count as unset).
    ///
    /// # Errors
    /// [`Error::Invalid`] when `MEMORY_MAX_CONTEXT_TOKENS` is not a positive integer or
    /// `MEMORY_COMPACT_AFTER_DAYS` not a whole number of days.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let var = |k: &str| var(k).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let mut settings = Self::default();
        if let Some(v) = var("MEMORY_MAX_CONTEXT_TOKENS") {
            settings.max_context_tokens =
                v.parse().ok().filter(|&n: &usize| n > 0).ok_or_else(|| Error::Invalid {
                    what: "MEMORY_MAX_CONTEXT_TOKENS",
                    reason: format!("`{v}` is not a positive number of tokens"),
                })?;
        }
        if let Some(v) = var("MEMORY_COMPACT_AFTER_DAYS") {
            settings.compact_after_days = Some(v.parse().map_err(|_| Error::Invalid {
                what: "MEMORY_COMPACT_AFTER_DAYS",
                reason: format!("`{v}` is not a whole number of days"),
            })?);
        }
        Ok(settings)
    }

    /// The schedule's policy: sessions idle for `MEMORY_COMPACT_AFTER_DAYS`; `None` when unset.
    pub fn compact_schedule(&self) -> Option<CompactPolicy> {
        self.compact_after_days.map(|days| CompactPolicy::default().after_days(days))
    }

    /// One line for the start-up banner.
    pub fn describe(&self) -> String {
        let schedule = match self.compact_after_days {
            Some(days) => format!("sessions idle {days}+ days are compacted on start and on /session, /user"),
            None => "on /compact (set MEMORY_COMPACT_AFTER_DAYS to schedule)".to_owned(),
        };
        format!("requests trimmed to {} tokens; compaction {schedule}", self.max_context_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_env::lookup;

    #[test]
    fn variables_are_read_and_bad_values_named() {
        assert_eq!(
            Settings::from_lookup(lookup(&[("MEMORY_COMPACT_AFTER_DAYS", " ")])).unwrap(),
            Settings::default()
        );
        let s = Settings::from_lookup(lookup(&[
            ("MEMORY_MAX_CONTEXT_TOKENS", "500"),
            ("MEMORY_COMPACT_AFTER_DAYS", "3"),
        ]))
        .unwrap();
        assert_eq!((s.max_context_tokens, s.compact_after_days), (500, Some(3)));
        assert_eq!(s.compact_schedule().and_then(|p| p.older_than_secs), Some(3 * 86_400));
        for (var, value) in [
            ("MEMORY_MAX_CONTEXT_TOKENS", "0"),
            ("MEMORY_MAX_CONTEXT_TOKENS", "lots"),
            ("MEMORY_COMPACT_AFTER_DAYS", "-1"),
            ("MEMORY_COMPACT_AFTER_DAYS", "1.5"),
        ] {
            let err = Settings::from_lookup(lookup(&[(var, value)])).unwrap_err();
            assert!(matches!(err, Error::Invalid { what, .. } if what == var), "{var}={value}: {err}");
        }
    }
}
