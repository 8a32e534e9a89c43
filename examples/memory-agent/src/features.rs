//! The parts of the agent that cargo features compile in, and the error a setting gets when it
//! names a part this build left out.
//!
//! The default build holds what the default run uses (the offline model, the multilingual
//! encoder, SQLite files); every server client is one feature away, so a first build compiles
//! no client it will not run.

use crate::error::Error;

/// A client that a cargo feature of this crate compiles in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Feature {
    /// MySQL or MariaDB checkpoints (`mysql`).
    MySql,
    /// PostgreSQL checkpoints (`postgres`).
    Postgres,
    /// Redis checkpoints (`redis`).
    Redis,
    /// Milvus long-term memory (`milvus`).
    Milvus,
    /// The OpenAI-compatible chat model and embeddings (`openai`).
    OpenAi,
}

impl Feature {
    /// The cargo feature's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::MySql => "mysql",
            Self::Postgres => "postgres",
            Self::Redis => "redis",
            Self::Milvus => "milvus",
            Self::OpenAi => "openai",
        }
    }

    /// Whether this build has it.
    pub fn compiled(self) -> bool {
        match self {
            Self::MySql => cfg!(feature = "mysql"),
            Self::Postgres => cfg!(feature = "postgres"),
            Self::Redis => cfg!(feature = "redis"),
            Self::Milvus => cfg!(feature = "milvus"),
            Self::OpenAi => cfg!(feature = "openai"),
        }
    }

    /// The error for `setting` naming this part in a build without it.
    pub fn missing(self, setting: &'static str) -> Error {
        Error::NotBuilt { setting, feature: self.name() }
    }

    /// `Ok` when `compiled` says the part is in, else [`missing`](Self::missing).
    pub(crate) fn require(self, setting: &'static str, compiled: impl Fn(Self) -> bool) -> Result<(), Error> {
        if compiled(self) {
            Ok(())
        } else {
            Err(self.missing(setting))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_part_names_its_feature_and_setting() {
        let err = Feature::MySql.require("MYSQL_URL", |_| false).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("MYSQL_URL"), "{text}");
        assert!(text.contains("--features mysql"), "{text}");
        assert!(Feature::Milvus.require("MILVUS_URL", |_| true).is_ok());
    }
}
