//! [`Where`]: a thread search as the condition of a query on the cluster's thread table, so that
//! filters (the caller's grant among them) and pages are applied by the database, never after
//! reading every thread.

use serde_json::{Map, Value};
use sqlx::mysql::MySqlArguments;
use sqlx::query::Query;
use sqlx::MySql;

use mnemograph_server::__cluster::ThreadSearch;

/// The `WHERE` condition of a thread search and the values it binds, in order.
pub(super) struct Where {
    pub(super) sql: String,
    binds: Vec<String>,
}

impl Where {
    /// The condition of `q`; `None` when it can find nothing (an empty list of ids).
    pub(super) fn of(q: &ThreadSearch) -> Option<Self> {
        // Rows without a creation time are not threads a search shows.
        let mut found = Self { sql: "created_at <> ''".to_owned(), binds: Vec::new() };
        // Metadata and state filters by JSON containment, the rule the process's own search
        // applies.
        found.contains("metadata", &q.within);
        if let Some(filter) = &q.metadata {
            found.contains("metadata", filter);
        }
        if let Some(filter) = &q.values {
            found.contains("state_values", filter);
        }
        if let Some(status) = &q.status {
            found.sql.push_str(" AND status = ?");
            found.binds.push(status.clone());
        }
        if let Some(ids) = &q.ids {
            if ids.is_empty() {
                return None;
            }
            found.sql.push_str(&format!(" AND thread_id IN ({})", vec!["?"; ids.len()].join(", ")));
            found.binds.extend(ids.iter().cloned());
        }
        Some(found)
    }

    fn contains(&mut self, column: &str, filter: &Map<String, Value>) {
        if filter.is_empty() {
            return;
        }
        self.sql.push_str(&format!(" AND JSON_CONTAINS({column}, ?)"));
        self.binds.push(Value::Object(filter.clone()).to_string());
    }

    /// `query` with the condition's values bound.
    pub(super) fn bind<'q>(
        &'q self,
        query: Query<'q, MySql, MySqlArguments>,
    ) -> Query<'q, MySql, MySqlArguments> {
        self.binds.iter().fold(query, |query, value| query.bind(value))
    }
}
