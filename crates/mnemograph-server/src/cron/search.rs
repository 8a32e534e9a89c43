//! [`CronSearch`]: what a search or count of crons asks for, its filters, order and page.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::record::CronRecord;
use crate::error::{Result, ServerError};
use crate::filter::holds;

/// The field a search of crons sorts by, as LangGraph names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CronSort {
    /// `cron_id`.
    CronId,
    /// `assistant_id`.
    AssistantId,
    /// `thread_id`; a stateless cron's none sorts first.
    ThreadId,
    /// `next_run_date`.
    NextRunDate,
    /// `end_time`; none sorts first.
    EndTime,
    /// `created_at`, the default.
    #[default]
    CreatedAt,
    /// `updated_at`.
    UpdatedAt,
}

impl CronSort {
    /// `sort_by` as a client sent it (`created_at` when absent; LangGraph reads it in any case);
    /// another field is unprocessable, with LangGraph's message.
    pub(crate) fn parse(asked: Option<&str>) -> Result<Self> {
        let Some(asked) = asked else { return Ok(Self::default()) };
        Ok(match asked.to_ascii_lowercase().as_str() {
            "cron_id" => Self::CronId,
            "assistant_id" => Self::AssistantId,
            "thread_id" => Self::ThreadId,
            "next_run_date" => Self::NextRunDate,
            "end_time" => Self::EndTime,
            "created_at" => Self::CreatedAt,
            "updated_at" => Self::UpdatedAt,
            _ => {
                return Err(ServerError::Unprocessable(format!(
                    "Invalid sort_by field: '{asked}'. Valid options are: cron_id, assistant_id, thread_id, \
                     next_run_date, end_time, created_at, updated_at"
                )))
            }
        })
    }

    /// The value of `cron` this sorts by; `None` (no thread, no end) sorts first.
    fn key(self, cron: &CronRecord) -> Option<&str> {
        match self {
            Self::CronId => Some(cron.cron_id.as_str()),
            Self::AssistantId => Some(cron.assistant_id.as_str()),
            Self::ThreadId => cron.thread_id.as_deref(),
            Self::NextRunDate => Some(cron.next_run_date.as_str()),
            Self::EndTime => cron.end_time.as_deref(),
            Self::CreatedAt => Some(cron.created_at.as_str()),
            Self::UpdatedAt => Some(cron.updated_at.as_str()),
        }
    }
}

/// A search or count of crons. `within` is the caller's grant: only crons whose metadata holds it
/// are found.
#[derive(Debug, Clone, Default)]
pub struct CronSearch {
    /// Only the crons of this assistant.
    pub assistant_id: Option<String>,
    /// Only the crons of this thread.
    pub thread_id: Option<String>,
    /// Only the crons enabled (or disabled).
    pub enabled: Option<bool>,
    /// The metadata the crons hold, as the client filters.
    pub metadata: Map<String, Value>,
    /// The metadata the caller's grant confines it to.
    pub within: Map<String, Value>,
    /// The field the page is ordered by.
    pub sort_by: CronSort,
    /// Whether the order is descending.
    pub descending: bool,
    /// The most crons in a page.
    pub limit: usize,
    /// How many matches the page skips.
    pub offset: usize,
}

impl CronSearch {
    /// Whether the search finds `cron`.
    pub(crate) fn keeps(&self, cron: &CronRecord) -> bool {
        self.assistant_id.as_ref().is_none_or(|a| *a == cron.assistant_id)
            && self.thread_id.as_ref().is_none_or(|t| cron.thread_id.as_ref() == Some(t))
            && self.enabled.is_none_or(|e| e == cron.enabled)
            && holds(&cron.metadata, &self.metadata)
            && holds(&cron.metadata, &self.within)
    }

    /// The search's order between two crons, ties broken by id in the same direction.
    pub(crate) fn order(&self, a: &CronRecord, b: &CronRecord) -> Ordering {
        let ascending = self.sort_by.key(a).cmp(&self.sort_by.key(b)).then_with(|| a.cron_id.cmp(&b.cron_id));
        if self.descending {
            ascending.reverse()
        } else {
            ascending
        }
    }
}
