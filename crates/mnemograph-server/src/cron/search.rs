//! [`CronSearch`]: what a search or count of crons asks for, its filters, order and page.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::record::CronRecord;
use crate::error::{Result, ServerError};
use crate::filter::holds;

/// The field a search of crons sorts by, as LangGraph names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum CronSort {
    CronId,
    AssistantId,
    ThreadId,
    NextRunDate,
    EndTime,
    #[default]
    CreatedAt,
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

    /// The column of a cluster's cron table this sorts by.
    #[cfg(feature = "cluster")]
    pub(crate) fn column(self) -> &'static str {
        match self {
            Self::CronId => "cron_id",
            Self::AssistantId => "assistant_id",
            Self::ThreadId => "thread_id",
            Self::NextRunDate => "next_run_date",
            Self::EndTime => "end_time",
            Self::CreatedAt => "created_at",
            Self::UpdatedAt => "updated_at",
        }
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
pub(crate) struct CronSearch {
    pub(crate) assistant_id: Option<String>,
    pub(crate) thread_id: Option<String>,
    pub(crate) enabled: Option<bool>,
    pub(crate) metadata: Map<String, Value>,
    pub(crate) within: Map<String, Value>,
    pub(crate) sort_by: CronSort,
    pub(crate) descending: bool,
    pub(crate) limit: usize,
    pub(crate) offset: usize,
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
