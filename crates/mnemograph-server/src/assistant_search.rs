//! [`AssistantSearch`] and [`VersionSearch`]: which assistants, or which versions of one, a
//! search or count asks for, in what order, and which page of them.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use crate::assistant::AssistantRecord;
use crate::error::{Result, ServerError};
use crate::filter::holds;

/// What assistants are ordered by, as LangGraph's `sort_by` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    /// `assistant_id`.
    AssistantId,
    /// `graph_id`, in any case.
    GraphId,
    /// `name`, in any case.
    Name,
    /// `created_at`, the default.
    #[default]
    CreatedAt,
    /// `updated_at`.
    UpdatedAt,
}

impl SortBy {
    /// `sort_by` as a request gives it; `None` orders by creation.
    pub(crate) fn parse(asked: Option<&str>) -> Result<Self> {
        Ok(match asked.map(str::to_ascii_lowercase).as_deref() {
            None => Self::CreatedAt,
            Some("assistant_id") => Self::AssistantId,
            Some("graph_id") => Self::GraphId,
            Some("name") => Self::Name,
            Some("created_at") => Self::CreatedAt,
            Some("updated_at") => Self::UpdatedAt,
            Some(other) => {
                return Err(ServerError::Unprocessable(format!(
                "unknown sort_by `{other}`: expected assistant_id, graph_id, name, created_at or updated_at"
            )))
            }
        })
    }

    fn key(self, a: &AssistantRecord) -> String {
        match self {
            Self::AssistantId => a.assistant_id.clone(),
            Self::GraphId => a.graph_id.to_lowercase(),
            Self::Name => a.name.to_lowercase(),
            Self::CreatedAt => a.created_at.clone(),
            Self::UpdatedAt => a.updated_at.clone(),
        }
    }
}

/// `POST /assistants/search` and `/assistants/count`.
#[derive(Debug, Clone, Default)]
pub struct AssistantSearch {
    /// Only the assistants of this graph.
    pub graph_id: Option<String>,
    /// A part of the name, in any case.
    pub name: Option<String>,
    /// Keys and values the metadata must hold.
    pub metadata: Map<String, Value>,
    /// The metadata the caller's grant confines it to.
    pub within: Map<String, Value>,
    /// The field the page is ordered by.
    pub sort_by: SortBy,
    /// Newest (or last) first: LangGraph's order unless `sort_order` is `asc`.
    pub descending: bool,
    /// The most assistants in a page.
    pub limit: usize,
    /// How many matches the page skips.
    pub offset: usize,
}

impl AssistantSearch {
    /// Whether `a` is one the search asks for.
    pub(crate) fn keeps(&self, a: &AssistantRecord) -> bool {
        self.graph_id.as_deref().is_none_or(|g| g == a.graph_id)
            && self.name.as_deref().is_none_or(|n| a.name.to_lowercase().contains(&n.to_lowercase()))
            && holds(&a.metadata, &self.metadata)
            && holds(&a.metadata, &self.within)
    }

    /// How `a` and `b` are ordered: by the sort key, then by id so that equal keys keep one order
    /// in one process and in a cluster.
    pub(crate) fn order(&self, a: &AssistantRecord, b: &AssistantRecord) -> Ordering {
        let by_key =
            self.sort_by.key(a).cmp(&self.sort_by.key(b)).then_with(|| a.assistant_id.cmp(&b.assistant_id));
        if self.descending {
            by_key.reverse()
        } else {
            by_key
        }
    }
}

/// `sort_order` as a request gives it: whether it orders last first.
pub(crate) fn descending(sort_order: Option<&str>) -> Result<bool> {
    match sort_order.map(str::to_ascii_lowercase).as_deref() {
        None | Some("desc") => Ok(true),
        Some("asc") => Ok(false),
        Some(other) => {
            Err(ServerError::Unprocessable(format!("unknown sort_order `{other}`: expected asc or desc")))
        }
    }
}

/// `POST /assistants/{id}/versions`: the versions of one assistant, newest first.
#[derive(Debug, Clone, Default)]
pub struct VersionSearch {
    /// Keys and values a version's metadata must hold.
    pub metadata: Map<String, Value>,
    /// The most versions in a page.
    pub limit: usize,
    /// How many matches the page skips.
    pub offset: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(id: &str, name: &str) -> AssistantRecord {
        let mut a = AssistantRecord::system("g");
        (a.assistant_id, a.name) = (id.to_owned(), name.to_owned());
        a
    }

    #[test]
    fn a_name_matches_any_part_in_any_case() {
        let q = AssistantSearch { name: Some("BOT".into()), ..AssistantSearch::default() };
        assert!(q.keeps(&named("1", "support-bot")));
        assert!(!q.keeps(&named("2", "helper")));
    }

    #[test]
    fn names_sort_without_regard_to_case() {
        let q = AssistantSearch { sort_by: SortBy::Name, descending: false, ..AssistantSearch::default() };
        let mut list = [named("1", "b"), named("2", "A"), named("3", "c")];
        list.sort_by(|a, b| q.order(a, b));
        let names: Vec<&str> = list.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["A", "b", "c"]);
    }

    #[test]
    fn unknown_orders_are_unprocessable() {
        assert!(SortBy::parse(Some("version")).is_err());
        assert!(descending(Some("sideways")).is_err());
        assert_eq!(SortBy::parse(Some("NAME")).ok(), Some(SortBy::Name));
        assert_eq!(descending(Some("ASC")).ok(), Some(false));
    }
}
