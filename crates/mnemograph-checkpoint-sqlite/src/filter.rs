//! The `WHERE` clause of `list`: thread, namespace, pinned id, `before`, and metadata filters
//! matched with `json_extract` as LangGraph's SQLite saver matches them.

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, ListOptions};
use serde_json::Value as Json;
use sqlx::query::QueryAs;
use sqlx::sqlite::SqliteArguments;
use sqlx::Sqlite;

/// A parameter of the clause.
enum Param {
    Text(String),
    Int(i64),
    Float(f64),
    Null,
}

/// Predicates joined by `AND`, with their parameters in order.
pub(crate) struct Where {
    predicates: Vec<String>,
    params: Vec<Param>,
}

impl Where {
    /// The clause for `list(config, options)`.
    ///
    /// # Errors
    /// [`CheckpointError::Invalid`] for a metadata filter key outside `[A-Za-z0-9_.-]`, which
    /// LangGraph refuses too (the key becomes part of a JSON path).
    pub(crate) fn new(
        config: Option<&CheckpointConfig>,
        options: &ListOptions,
    ) -> Result<Self, CheckpointError> {
        let mut clause = Self { predicates: Vec::new(), params: Vec::new() };
        if let Some(config) = config {
            clause.push("thread_id = ?", Param::Text(config.thread_id.clone()));
            clause.push("checkpoint_ns = ?", Param::Text(config.checkpoint_ns.clone()));
            if let Some(id) = &config.checkpoint_id {
                clause.push("checkpoint_id = ?", Param::Text(id.clone()));
            }
        }
        for (key, value) in options.filter.iter().flatten() {
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)) {
                return Err(CheckpointError::Invalid(format!(
                    "metadata filter key `{key}`: only ASCII letters, digits, `_`, `.` and `-` are accepted"
                )));
            }
            let extract = metadata_field(key);
            match value {
                Json::Null => clause.push(&format!("{extract} IS NULL"), None),
                other => clause.push(&format!("{extract} = ?"), Some(param(other))),
            }
        }
        if let Some(before) = &options.before {
            clause.push("checkpoint_id < ?", Param::Text(before.clone()));
        }
        Ok(clause)
    }

    fn push(&mut self, predicate: &str, param: impl Into<Option<Param>>) {
        self.predicates.push(predicate.to_owned());
        self.params.extend(param.into());
    }

    /// `WHERE ...`, or nothing.
    pub(crate) fn sql(&self) -> String {
        match self.predicates.is_empty() {
            true => String::new(),
            false => format!("WHERE {}", self.predicates.join(" AND ")),
        }
    }

    /// `query` with the clause's parameters bound, in order.
    pub(crate) fn bind<'q, O>(
        self,
        mut query: QueryAs<'q, Sqlite, O, SqliteArguments<'q>>,
    ) -> QueryAs<'q, Sqlite, O, SqliteArguments<'q>> {
        for param in self.params {
            query = match param {
                Param::Text(s) => query.bind(s),
                Param::Int(i) => query.bind(i),
                Param::Float(f) => query.bind(f),
                Param::Null => query.bind(None::<String>),
            };
        }
        query
    }
}

/// What `json_extract` returns for a stored value equal to `value`: the scalar itself (booleans
/// as 1 and 0), or the compact JSON text of an object or array.
fn param(value: &Json) -> Param {
    match value {
        Json::Null => Param::Null,
        Json::Bool(b) => Param::Int(i64::from(*b)),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Param::Int(i),
            None => Param::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Param::Text(s.clone()),
        other => Param::Text(other.to_string()),
    }
}

/// The metadata value at JSON path `$.{path}`, or `NULL` when the metadata is not JSON (a corrupt
/// row of another thread does not make the statement fail).
pub(crate) fn metadata_field(path: &str) -> String {
    format!(
        "json_extract(CASE WHEN json_valid(CAST(metadata AS TEXT)) THEN CAST(metadata AS TEXT) END, '$.{path}')"
    )
}
