//! The condition of a search over a cluster table and the values it binds. Values only ever
//! reach the SQL as `?` placeholders, never as text.

use serde_json::{Map, Value};
use sqlx::mysql::MySqlArguments;
use sqlx::query::Query;
use sqlx::MySql;

/// `1 = 1`, then one `AND` per condition, and the values to bind in order.
pub(super) struct Conditions {
    /// The condition, to follow `WHERE`.
    pub(super) sql: String,
    /// The values of its placeholders, in order.
    binds: Vec<String>,
}

impl Conditions {
    /// No condition yet: every row.
    pub(super) fn new() -> Self {
        Self { sql: "1 = 1".to_owned(), binds: Vec::new() }
    }

    /// Adds `condition`, which holds one `?`, bound to `value`.
    pub(super) fn and(&mut self, condition: &str, value: impl Into<String>) {
        self.sql.push_str(" AND ");
        self.sql.push_str(condition);
        self.binds.push(value.into());
    }

    /// Adds `condition`, which binds nothing.
    pub(super) fn and_fixed(&mut self, condition: &'static str) {
        self.sql.push_str(" AND ");
        self.sql.push_str(condition);
    }

    /// Metadata holding `filter`, by JSON containment as in one process.
    pub(super) fn contains(&mut self, filter: &Map<String, Value>) {
        if !filter.is_empty() {
            self.and("JSON_CONTAINS(metadata, ?)", Value::Object(filter.clone()).to_string());
        }
    }

    /// `query` with the values bound.
    pub(super) fn bind<'q>(
        &'q self,
        query: Query<'q, MySql, MySqlArguments>,
    ) -> Query<'q, MySql, MySqlArguments> {
        self.binds.iter().fold(query, |query, value| query.bind(value))
    }
}
