//! Per-node retry policy (LangGraph's `RetryPolicy`).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::error::BoxError;

type RetryOn = Arc<dyn Fn(&BoxError) -> bool + Send + Sync>;

/// How a failing node is retried: exponential backoff with optional jitter.
///
/// Defaults match LangGraph: 0.5 s initial interval, factor 2, at most 128 s, 3 attempts, jitter.
#[derive(Clone)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Wait before the first retry.
    pub initial_interval: Duration,
    /// Multiplier applied to the wait after each retry.
    pub backoff_factor: f64,
    /// Upper bound on one wait.
    pub max_interval: Duration,
    /// Total attempts, the first included.
    pub max_attempts: u32,
    /// Add up to one second of random jitter to each wait.
    pub jitter: bool,
    retry_on: Option<RetryOn>,
}

impl fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("initial_interval", &self.initial_interval)
            .field("backoff_factor", &self.backoff_factor)
            .field("max_interval", &self.max_interval)
            .field("max_attempts", &self.max_attempts)
            .field("jitter", &self.jitter)
            .field("retry_on", &self.retry_on.as_ref().map(|_| "<fn>"))
            .finish()
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            initial_interval: Duration::from_millis(500),
            backoff_factor: 2.0,
            max_interval: Duration::from_secs(128),
            max_attempts: 3,
            jitter: true,
            retry_on: None,
        }
    }
}

impl RetryPolicy {
    /// LangGraph's defaults.
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the number of attempts (the first included).
    #[must_use]
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }
    /// Sets the first wait.
    #[must_use]
    pub fn initial_interval(mut self, d: Duration) -> Self {
        self.initial_interval = d;
        self
    }
    /// Sets the backoff multiplier.
    #[must_use]
    pub fn backoff_factor(mut self, f: f64) -> Self {
        self.backoff_factor = f;
        self
    }
    /// Sets the upper bound of one wait.
    #[must_use]
    pub fn max_interval(mut self, d: Duration) -> Self {
        self.max_interval = d;
        self
    }
    /// Turns jitter on or off.
    #[must_use]
    pub fn jitter(mut self, on: bool) -> Self {
        self.jitter = on;
        self
    }
    /// Retries only errors for which `pred` is true (default: every error).
    #[must_use]
    pub fn retry_on(mut self, pred: impl Fn(&BoxError) -> bool + Send + Sync + 'static) -> Self {
        self.retry_on = Some(Arc::new(pred));
        self
    }

    /// Whether `error` may be retried.
    pub fn should_retry(&self, error: &BoxError) -> bool {
        self.retry_on.as_ref().is_none_or(|p| p(error))
    }

    /// The wait before attempt `attempt + 1`, where `attempt` (1-based) just failed.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = self.backoff_factor.powi(attempt.saturating_sub(1) as i32);
        let base = self.initial_interval.as_secs_f64() * factor;
        let mut wait = base.min(self.max_interval.as_secs_f64());
        if self.jitter {
            wait += rand::random::<f64>();
        }
        Duration::from_secs_f64(wait.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::new().jitter(false).max_interval(Duration::from_secs(1));
        assert_eq!(p.backoff(1), Duration::from_millis(500));
        assert_eq!(p.backoff(2), Duration::from_secs(1));
        assert_eq!(p.backoff(5), Duration::from_secs(1));
    }

    #[test]
    fn retry_on_filters_errors() {
        let p = RetryPolicy::new().retry_on(|e| e.to_string().contains("transient"));
        assert!(p.should_retry(&"transient glitch".into()));
        assert!(!p.should_retry(&"bad input".into()));
    }
}
