//! [`PruneStrategy`]: what [`Checkpointer::prune`](super::Checkpointer::prune) keeps of a thread.

use std::fmt;
use std::str::FromStr;

use super::CheckpointError;

/// What [`Checkpointer::prune`](super::Checkpointer::prune) keeps of each thread it is given
/// (LangGraph's `strategy` argument, `"keep_latest"` by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PruneStrategy {
    /// Keeps the latest checkpoint of every namespace, with its pending writes, and removes the
    /// others (`"keep_latest"`).
    #[default]
    KeepLatest,
    /// Removes every checkpoint and pending write of the thread (`"delete"`).
    Delete,
}

impl PruneStrategy {
    /// LangGraph's name of the strategy: `"keep_latest"` or `"delete"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::KeepLatest => "keep_latest",
            Self::Delete => "delete",
        }
    }
}

impl fmt::Display for PruneStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PruneStrategy {
    type Err = CheckpointError;

    /// Parses LangGraph's names; anything else is [`CheckpointError::Invalid`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "keep_latest" => Ok(Self::KeepLatest),
            "delete" => Ok(Self::Delete),
            other => Err(CheckpointError::Invalid(format!(
                "unknown prune strategy `{other}`: expected `keep_latest` or `delete`"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_parse_from_langgraphs_names() {
        for strategy in [PruneStrategy::KeepLatest, PruneStrategy::Delete] {
            assert_eq!(strategy.as_str().parse::<PruneStrategy>().unwrap(), strategy);
        }
        assert_eq!(PruneStrategy::default(), PruneStrategy::KeepLatest);
        let err = "keep_all".parse::<PruneStrategy>().unwrap_err();
        assert!(matches!(err, CheckpointError::Invalid(_)), "{err}");
    }
}
